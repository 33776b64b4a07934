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
    """Each request's demand, in the order the server took them: its measured CPU, then the wait
    its path showed alone; without the header, a wait's own duration or the work's CPU seconds."""
    taken = accounts(requests)
    if len(taken) != len(requests):
        return None
    # The server's processes, numbered in the order they first took a request.
    process = {pid: index for index, pid in enumerate(dict.fromkeys(a.pid for a in taken))}
    demands = []
    for account in taken:
        ran_on = process[account.pid] if account.pid is not None else None
        if wait_s is not None and account.cpu_s is not None:
            demands.append(Job(account.cpu_s, wait_s, process=ran_on))
        elif endpoint.work == "io":
            demands.append(Job(0.0, account.app_s))
        elif (cpu := account.cpu_s if account.cpu_s is not None else fallback_s) is not None:
            demands.append(Job(cpu, process=ran_on))
        else:
            return None
    return demands
