"""The ``clgrad`` command of a pip install (pyproject.toml's entry point): runs the command the
package carries (clgrad/bin/clgrad), with the same arguments."""

import os
import sys


def main():
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "clgrad")
    if not os.access(program, os.X_OK):
        sys.exit(f"clgrad: the command is not in this installation ({program})")
    os.execv(program, [program] + sys.argv[1:])
