"""Reading the Server-Timing header the CPU middleware writes (measure.servertiming), in tests."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

# The contract: the middleware's CPU per request agrees with what the work measured within 5 %.
AGREEMENT = 0.05
# A sleep may end this much early under uvicorn: uvloop's timers run on libuv's millisecond clock
# (a 10 ms asyncio.sleep after CPU work took 9.37 ms here).
TIMER_TICK_S = 0.001


@dataclass(frozen=True)
class Timing:
    cpu_s: float
    app_s: float
    pid: int
    started_at: float
    elsewhere_s: float | None = None  # of cpu_s, what ran off the request's own thread


def parse(header: str | None) -> Timing | None:
    """The lab's entries of a Server-Timing header (`lab-cpu`, `lab-app`, `lab-pid`, `lab-start`,
    `lab-elsewhere` where present), in any order among the app's own; None without the first four."""
    entries: dict[str, dict[str, str]] = {}
    for entry in (header or "").split(","):
        name, *parameters = (part.strip() for part in entry.split(";"))
        entries[name] = dict(parameter.partition("=")[::2] for parameter in parameters)
    try:
        return Timing(
            cpu_s=float(entries["lab-cpu"]["dur"]) / 1000,
            app_s=float(entries["lab-app"]["dur"]) / 1000,
            pid=int(entries["lab-pid"]["desc"]),
            started_at=float(entries["lab-start"]["desc"]),
            elsewhere_s=float(entries["lab-elsewhere"]["dur"]) / 1000 if "lab-elsewhere" in entries else None,
        )
    except (KeyError, ValueError):
        return None


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    timing: Timing


def fetch(url: str) -> Reply:
    response = httpx.get(url, timeout=60)
    timing = parse(response.headers.get("server-timing"))
    assert timing is not None, (url, response.headers)
    body = (
        response.json()
        if response.headers.get("content-type", "").startswith("application/json")
        else response.text
    )
    return Reply(response.status_code, body, timing)


def burst(urls: list[str]) -> list[Reply]:
    """Every URL requested at once, each on its own connection; the replies in the same order."""
    with ThreadPoolExecutor(len(urls)) as pool:
        replies = list(pool.map(fetch, urls))
    assert all(reply.status == 200 for reply in replies), [(r.status, r.body) for r in replies]
    return replies


def agrees(measured_s: float, burned_s: float) -> bool:
    return abs(measured_s - burned_s) <= AGREEMENT * burned_s
