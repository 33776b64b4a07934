"""The team's own app, given by name (LAB_APP), served in the configurations the lab compares, with
the lab's control paths ahead of it and each request's CPU measured around it."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from apps.team.loading import load_app
from apps.team.settings import AppSettings
from workload.served_by import AppError, Interface

FACTORIES: dict[Interface, str] = {"asgi": "apps.team.asgi:create_app", "wsgi": "apps.team.wsgi:create_app"}
# The app is imported from the working directory (or PYTHONPATH): that is what LAB_RELOAD watches.
RELOAD_DIRS = [str(Path.cwd())]


def check() -> tuple[Interface, str, str]:
    """LAB_APP imported and recognised: its interface, its framework and how a refusal names it;
    else AppError, one line naming what is wrong."""
    try:
        settings = AppSettings()
    except ValidationError as error:
        first = error.errors()[0]
        raise AppError(f"LAB_{str(first['loc'][0]).upper()}: {first['msg']}") from None
    loaded = load_app(settings.app)
    if settings.max_in_flight is not None:
        raise AppError(
            f"LAB_MAX_IN_FLIGHT={settings.max_in_flight}: the lab does not limit the requests in flight of "
            f"LAB_APP={settings.app}"
        )
    return loaded.interface, loaded.framework, f"LAB_APP={settings.app}"
