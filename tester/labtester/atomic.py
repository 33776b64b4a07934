"""Files written whole or not at all: into a temporary file beside the target, renamed over it
once complete (os.replace is atomic on one filesystem). A run killed while writing its reports
leaves the previous report.html, results.json or summary.txt, never half of one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def replacing(path: Path, binary: bool = False, newline: str | None = None) -> Iterator[IO[Any]]:
    """A file to write `path`'s new content to; `path` gets it only if the block ends normally."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with temporary.open(
            "wb" if binary else "w", newline=None if binary else newline, encoding=None if binary else "utf-8"
        ) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text(path: Path, text: str) -> Path:
    with replacing(path) as file:
        file.write(text)
    return path
