"""How gunicorn takes over from `python -m serve`: in place of this process (the same pid, so the
launcher's process is the arbiter), configured from the LAB_* environment by servers.gunicorn.conf.
"""

from __future__ import annotations

import os
import sys

GUNICORN_CONFIG = "python:servers.gunicorn.conf"


def exec_gunicorn(app: str) -> None:
    """Replace this process with gunicorn serving `app` (gunicorn's `module:callable` or
    `module:factory()`), configured from the environment. Nothing imported here survives: a gevent
    worker imports the app after it patched itself."""
    os.execv(sys.executable, [sys.executable, "-m", "gunicorn", "--config", GUNICORN_CONFIG, app])
