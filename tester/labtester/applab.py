"""A team's app on 127.0.0.1: checked before anything starts (`python -m serve team check`), then
served in every configuration of its interface (the chart's `app.configurations`), each told the
app and its traffic's paths (app_env) beside the downstream mock's URL.

The app is imported from the working directory or PYTHONPATH, so the working directory goes on
the servers' PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from labtester.targets import ENTRYPOINT, TEAM_APP

CHECK_TIMEOUT_S = 120  # importing an app can take a while (its framework, its data)


class AppError(RuntimeError):
    """The app cannot be served: one line that names the problem."""


def app_env(app: str, routes: list[str]) -> dict[str, str]:
    """What every configuration of the app is told, beside its own server settings; `routes`: the
    traffic's paths (Traffic.routes), a JSON list, as a path may hold a comma."""
    python_path = [os.getcwd(), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {
        "LAB_APP": app,
        "LAB_APP_PATHS": json.dumps(routes),
        "PYTHONPATH": os.pathsep.join(python_path),
    }


def check_app(app: str, paths: list[str]) -> str:
    """`python -m serve team check`: the app's interface (asgi, wsgi), or AppError with its line."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", ENTRYPOINT, TEAM_APP, "check"],
            env={**os.environ, **app_env(app, paths)},
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise AppError(f"importing {app} took more than {CHECK_TIMEOUT_S} s") from None
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    if done.returncode != 0:
        said = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "")
        raise AppError(said.removeprefix("error:").strip() or f"the app check of {app} failed")
    try:
        interface = json.loads(done.stdout.strip().splitlines()[-1])["interface"]
    except (ValueError, IndexError, KeyError, TypeError):
        raise AppError(f"the app check of {app} said {done.stdout.strip()!r}, not its interface") from None
    return str(interface)
