"""The server's account of each request of a burst, and the wait its path shows alone.

Every target's responses carry the CPU middleware's Server-Timing figures (the lab's own endpoints
are wrapped by the same middleware as a team's app), so one reading serves both. A response
without them (a target older than the middleware) falls back to the lab's JSON body, which said
the same of its work: start, finish, CPU seconds, pid.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Literal

from labtester.info import EndpointInfo
from labtester.model import Job

Source = Literal["server-timing", "body"]


@dataclass(frozen=True)
class Served:
    started_at: float  # server epoch seconds: the app was called (header) or the work began (body)
    finished_at: float  # its response headers were sent (header) or its work ended (body)
    cpu_s: float | None
    pid: int | None
    source: Source

    @property
    def app_s(self) -> float:
        return self.finished_at - self.started_at


def served(request: dict[str, Any]) -> Served | None:
    """What the server said of one request (a raw reply), or None where it said nothing."""
    started, app = request.get("started_at"), request.get("app_s")
    if started is not None and app is not None:
        return Served(started, started + app, request.get("cpu_s"), request.get("pid"), "server-timing")
    body = request.get("body") or {}
    if "started_at" in body and "finished_at" in body:
        return Served(body["started_at"], body["finished_at"], body.get("cpu_s"), body.get("pid"), "body")
    return None


def accounts(requests: list[dict[str, Any]]) -> list[Served]:
    """The account of every request that has one, in the order the server took them."""
    found = [account for account in map(served, requests) if account is not None]
    return sorted(found, key=lambda account: account.started_at)


def path_wait(alone: list[dict[str, Any]]) -> float | None:
    """The wait the path showed alone: the app's time less its CPU, median over the requests sent
    one at a time (None without the header's figures: the body's endpoints say their work)."""
    waits = [
        a.app_s - a.cpu_s
        for a in map(served, (r for r in alone if not r["error"]))
        if a is not None and a.source == "server-timing" and a.cpu_s is not None
    ]
    return max(0.0, statistics.median(waits)) if waits else None


def jobs(
    requests: list[dict[str, Any]], endpoint: EndpointInfo, wait_s: float | None, fallback_s: float | None
) -> list[Job] | None:
    """Each request's demand, in the order the server took them: its measured CPU, then its wait.

    Where the path declares its work (the lab's own endpoints) the wait is what it declares: a CPU
    endpoint does not wait (what its time adds to its CPU alone is overhead, or a core it waited
    for), a wait endpoint's wait is each request's own. A team's path, or mixed work, waits what
    the path showed alone (`wait_s`).
    """
    taken = accounts(requests)
    if len(taken) != len(requests):
        return None
    # The server's processes, numbered in the order they first took a request.
    process = {pid: index for index, pid in enumerate(dict.fromkeys(a.pid for a in taken))}
    demands = []
    for account in taken:
        ran_on = process[account.pid] if account.pid is not None else None
        if endpoint.work == "io":
            used = account.cpu_s if account.source == "server-timing" and account.cpu_s is not None else 0.0
            demands.append(Job(used, account.app_s - used))
            continue
        cpu = account.cpu_s if account.cpu_s is not None else fallback_s
        if cpu is None:
            return None
        wait = (wait_s or 0.0) if endpoint.work in ("app", "mixed") else 0.0
        demands.append(Job(cpu, wait, process=ran_on))
    return demands
