"""The server's own account of one request, read from its W3C `Server-Timing` header.

Every target wraps its app in the lab's CPU middleware, which appends to any Server-Timing the app
set itself: `lab-cpu;dur=12.345, lab-app;dur=45.678, lab-pid;desc=1234,
lab-start;desc=1764000000.123456, lab-queue;dur=0.512, lab-elsewhere;dur=9.876` (milliseconds
for `dur`; `lab-start` in server epoch seconds; `lab-queue`, of the app's time, its threads' wait on
a run queue for a core; `lab-elsewhere`, of its CPU, what ran off its own thread: in threads it
handed work to or started, in other processes), and `lab-gc;dur=123.456;desc=4`: the full garbage
collections its process had run so far as it answered, their CPU and their count.
Only those names are read, in any order among the app's own entries (an app's `cpu` or `app` is its
own, never the lab's); where a name comes twice the last wins, the lab's being appended last. A
response without them was not measured: None, never zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

HEADER = "server-timing"


@dataclass(frozen=True)
class ServerTiming:
    cpu_s: float | None = None  # CPU the request used where it ran, up to its response headers
    app_s: float | None = None  # wall time from the app being called to its response headers
    pid: int | None = None  # the process that served it
    started_at: float | None = None  # server epoch seconds when the app was called
    queued_s: float | None = None  # of app_s, the time its threads waited on a run queue for a core
    elsewhere_s: float | None = None  # of cpu_s, what ran off the request's own thread
    collections: int | None = None  # full collections its process had run so far (lab-gc)
    collections_cpu_s: float | None = None  # their CPU


CPU, APP, PID, START, QUEUE = "lab-cpu", "lab-app", "lab-pid", "lab-start", "lab-queue"
ELSEWHERE, COLLECTIONS = "lab-elsewhere", "lab-gc"


def _entries(values: Iterable[str]) -> dict[str, dict[str, str]]:
    """`name;key=value;key="value"` entries of every header line, by name (the last one wins)."""
    entries: dict[str, dict[str, str]] = {}
    for value in values:
        for entry in value.split(","):
            name, *params = (part.strip() for part in entry.split(";"))
            if not name:
                continue
            fields = {}
            for param in params:
                key, _, text = param.partition("=")
                fields[key.strip().lower()] = text.strip().strip('"')
            entries[name.lower()] = fields
    return entries


def _number(entry: dict[str, str] | None, key: str) -> float | None:
    try:
        return float(entry[key]) if entry is not None and key in entry else None
    except ValueError:
        return None


def parse(values: Iterable[str]) -> ServerTiming:
    """The lab's figures from the header's values (one per header line); None where absent."""
    entries = _entries(values)
    cpu_ms, app_ms = _number(entries.get(CPU), "dur"), _number(entries.get(APP), "dur")
    pid = _number(entries.get(PID), "desc")
    queued_ms = _number(entries.get(QUEUE), "dur")
    elsewhere_ms = _number(entries.get(ELSEWHERE), "dur")
    collections = _number(entries.get(COLLECTIONS), "desc")
    collections_ms = _number(entries.get(COLLECTIONS), "dur")
    return ServerTiming(
        cpu_s=cpu_ms / 1000 if cpu_ms is not None else None,
        app_s=app_ms / 1000 if app_ms is not None else None,
        pid=int(pid) if pid is not None else None,
        started_at=_number(entries.get(START), "desc"),
        queued_s=queued_ms / 1000 if queued_ms is not None else None,
        elsewhere_s=elsewhere_ms / 1000 if elsewhere_ms is not None else None,
        collections=int(collections) if collections is not None else None,
        collections_cpu_s=collections_ms / 1000 if collections_ms is not None else None,
    )


def from_headers(headers: Iterable[tuple[bytes | str, bytes | str]]) -> ServerTiming:
    """From raw (name, value) header pairs, as h11 and aiohttp give them."""
    values = [_text(value) for name, value in headers if _text(name).lower() == HEADER]
    return parse(values)


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value
