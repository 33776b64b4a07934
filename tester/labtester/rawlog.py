"""The raw log: every observation, appended and flushed the moment it is measured.

raw.jsonl is the source of truth. A crash, a dead target or SIGTERM never loses what was already
measured: results.json, the CSVs, the plots and the HTML page are all built from it, and
`python -m labtester report DIR` rebuilds them. It holds every request; the results document
holds what was made of them.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Protocol

RAW_LOG = "raw.jsonl"

Record = dict[str, Any]


class RecordSink(Protocol):
    """Where a client's observations go: the raw log (client 0), or the barrier (the others)."""

    def write(self, record_type: str, **fields: Any) -> None: ...


class RawLog:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / RAW_LOG
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()  # client 0 and the barrier (other clients' records) both write

    def write(self, record_type: str, **fields: Any) -> None:
        self.write_many([{"type": record_type, **fields}])

    def write_many(self, records: list[Record]) -> None:
        if not records:
            return
        text = "".join(json.dumps(record, default=str) + "\n" for record in records)
        with self._lock:
            self._file.write(text)
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RawLog:
        return self

    def __exit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


class RawRecords(list[Record]):
    """The records of a raw log, in order, and the lines that held none (number, reason)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[tuple[int, str]] = []


def read_raw(directory: Path) -> RawRecords:
    """Every record; a line that is not one (cut short by a crash, or damaged) is skipped and
    named, and what follows it is kept."""
    records = RawRecords()
    with (directory / RAW_LOG).open(encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                records.skipped.append((number, f"not JSON ({error.msg}, column {error.colno})"))
                continue
            if isinstance(record, dict) and isinstance(record.get("type"), str):
                records.append(record)
            else:
                records.skipped.append((number, "not a record (no type)"))
    return records
