"""`python -m flask_target`: the one definition of how this target is served.

Replaces this process with gunicorn (same pid, so the launcher's process is the arbiter); all
settings come from the LAB_* environment through gunicorn_conf.
"""

from __future__ import annotations

import os
import sys

GUNICORN_ARGV = [
    sys.executable,
    "-m",
    "gunicorn",
    "--config",
    "python:flask_target.gunicorn_conf",
    "flask_target.app:create_app()",
]


def main() -> None:
    os.execv(sys.executable, GUNICORN_ARGV)


if __name__ == "__main__":
    main()
