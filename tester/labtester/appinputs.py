"""A team's app's inputs that are more than a type: its paths (never one of the lab's own) and the
pod's memory as Kubernetes writes a quantity. Kept apart from the settings model, which reads them."""

from __future__ import annotations

import re

from labtester.info import ControlPaths

# The lab serves these itself, ahead of any app: never one of an app's paths.
CONTROL_PATHS = frozenset(value for value in ControlPaths().model_dump().values() if isinstance(value, str))


def check_app_path(path: str) -> str:
    """An app's path as a request sends it: from /, maybe a query, never one of the lab's own."""
    if not path.startswith("/"):
        raise ValueError(f"path {path!r} does not start with /")
    if not all("!" <= character <= "~" for character in path):  # a request line carries no more
        raise ValueError(f"path {path!r} holds a space or a character beyond ASCII: percent-encode it")
    if path.partition("?")[0] in CONTROL_PATHS:
        raise ValueError(
            f"path {path!r} is one of the lab's control paths ({', '.join(sorted(CONTROL_PATHS))})"
        )
    return path


MEMORY_UNITS = {"": 1, "k": 1000, "m": 1000**2, "g": 1000**3, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30}


def parse_cpu(text: str) -> float:
    """A Kubernetes CPU quantity in cores: "250m" -> 0.25, "2" -> 2.0."""
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def parse_memory(text: str) -> int:
    """`1Gi`, `512Mi`, `2G`, `1GiB` or bytes, as Kubernetes writes a quantity."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgG]i?)?[bB]?\s*", text)
    if not found:
        raise ValueError("not a memory size (bytes, or 512Mi, 1Gi, 2G)")
    return int(float(found.group(1)) * MEMORY_UNITS[(found.group(2) or "").lower()])
