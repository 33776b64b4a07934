"""`python -m granian_target`: the lab's FastAPI app (LAB_INTERFACE=asgi) or Flask app (wsgi) on
granian, the one definition of how this target is served (granian_target.serving says how granian
serves an app, for this family and for a team's app)."""

from __future__ import annotations

from granian_target.serving import other_servers_setting, serve_granian
from granian_target.settings import APPS, GranianSettings


def main() -> None:
    settings = GranianSettings()
    refused = other_servers_setting(settings)
    if refused is not None:
        raise SystemExit(refused)
    serve_granian(settings, APPS[settings.interface])


if __name__ == "__main__":
    main()
