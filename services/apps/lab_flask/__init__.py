"""The lab's Flask app (WSGI): one request at a time per sync worker, or its threads or greenlets."""

from __future__ import annotations

from pathlib import Path

from workload.served_by import Interface

FACTORIES: dict[Interface, str] = {"wsgi": "apps.lab_flask.app:create_app"}
RELOAD_DIRS = [str(Path(__file__).parent)]


def check() -> tuple[Interface, str, str]:
    """Its interface, its framework and how a refusal names it."""
    return "wsgi", "flask", "the lab's Flask app"
