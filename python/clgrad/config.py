"""clgrad's options (the table of backend/clg_options.def; docs/ENVIRONMENT.md).

Each option is also an environment variable CLGRAD_<NAME>; set() changes it in this process:
``clgrad.config.set("GEMM", "own")``; ``set(name, None)`` puts the default back. A value outside
the accepted ones raises ValueError naming the option and what it accepts.
"""

from . import _C


def set(name, value):  # noqa: A001  (the name users expect)
    """Sets option `name` (``"GEMM"`` or ``"CLGRAD_GEMM"``) to `value` (str, int or bool; None: default)."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    elif value is not None:
        value = str(value)
    _C.config_set(name, value)


def get(name):
    """The value in force, as text."""
    return _C.config_get(name)


def options():
    """Every option: dicts with name, type, default, choices, scope, value and source."""
    return _C.config_options()
