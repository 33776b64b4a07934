"""The lab's FastAPI app (ASGI): one event loop per worker, and the ways to use it well and badly."""

from __future__ import annotations

from pathlib import Path

from workload.served_by import Interface

FACTORIES: dict[Interface, str] = {"asgi": "apps.lab_fastapi.app:create_app"}
RELOAD_DIRS = [str(Path(__file__).parent)]


def check() -> tuple[Interface, str, str]:
    """Its interface, its framework and how a refusal names it."""
    return "asgi", "fastapi", "the lab's FastAPI app"
