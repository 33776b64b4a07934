"""A YAML (or JSON) file of settings, values or traffic, its problems told in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def read_mapping(path: Path) -> dict[str, Any]:
    """The file's mapping ({} for an empty file); ValueError, in one line, for anything else."""
    loaded = read_yaml(path)
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: holds a {type(loaded).__name__}, not a mapping of names to values")
    return loaded


def read_yaml(path: Path) -> Any:
    """What the file holds (None: nothing); ValueError, in one line, where it cannot be read."""
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        reason = str(getattr(error, "strerror", None) or error).lower()
        raise ValueError(f"{path}: cannot be read ({reason})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = " ".join(str(getattr(error, "problem", None) or error).split())
        raise ValueError(f"{path}: not YAML ({where}{problem})") from None
    return loaded
