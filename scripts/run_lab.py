#!/usr/bin/env python3
"""`make run-lab`: check the release fits, install it, wait for it, run the tester Job, copy reports.

The steps are the package lab_release (its docstring lists them); this file is the command.
"""

from lab_release.main import entry  # scripts/ is first on sys.path when this file runs

if __name__ == "__main__":
    entry()
