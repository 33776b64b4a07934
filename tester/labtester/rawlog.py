"""The raw log: every observation, appended and flushed the moment it is measured.

raw.jsonl is the source of truth. A crash, a dead target or SIGTERM never loses what was already
measured: results.json, the CSVs, the plots and the HTML page are all built from it, and
`python -m labtester report DIR` rebuilds them. It holds every request; the results document
holds what was made of them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import IO, Any

RAW_LOG = "raw.jsonl"

Record = dict[str, Any]


class RawLog:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / RAW_LOG
        self._file: IO[str] = self.path.open("a", encoding="utf-8")

    def write(self, record_type: str, **fields: Any) -> None:
        self._file.write(json.dumps({"type": record_type, **fields}, default=str) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RawLog:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


def read_raw(directory: Path) -> list[Record]:
    records = []
    for line in (directory / RAW_LOG).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a crash: everything before it stands
    return records
