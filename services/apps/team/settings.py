"""The team app's settings: every target's (workload.settings), plus the app and its paths. The
server and its knobs are the server's (servers/<name>/settings.py, LAB_SERVER read by serve)."""

from __future__ import annotations

import json

from pydantic import Field, field_validator

from workload.settings import TargetSettings


class AppSettings(TargetSettings):
    app: str = Field(
        "",
        description="LAB_APP: the app as package.module:attribute, or package.module:factory() (called "
        "once per worker), imported from the working directory or PYTHONPATH.",
    )
    app_paths: str = Field(
        "",
        description="LAB_APP_PATHS: the app's paths the lab measures, comma-separated or a JSON list, "
        "each starting with / and maybe a query string: /info lists them, /metrics labels requests by them.",
    )

    @field_validator("app_paths")
    @classmethod
    def _paths_start_with_a_slash(cls, value: str) -> str:
        for path in _split(value):
            if not path.startswith("/"):
                raise ValueError(f"each path starts with /: {path!r}")
        return value

    def paths(self) -> list[str]:
        return _split(self.app_paths)


def _split(paths: str) -> list[str]:
    """Comma-separated, or a JSON list of strings (the tester's form: a path may hold a comma)."""
    if paths.lstrip().startswith("["):
        try:
            listed = json.loads(paths)
        except ValueError:
            raise ValueError(f"not a JSON list of paths: {paths!r}") from None
        if not isinstance(listed, list) or not all(isinstance(path, str) for path in listed):
            raise ValueError(f"not a JSON list of paths: {paths!r}")
        return [path for path in listed if path]
    return [path.strip() for path in paths.split(",") if path.strip()]
