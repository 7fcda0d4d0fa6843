"""clgrad.utils: torch.utils's parts that clgrad has (checkpoint)."""
from . import checkpoint  # noqa: F401
