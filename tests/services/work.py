"""Requests the service tests send: work sized in seconds, and bursts sent all at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from labtester.launcher import RunningTarget


def iterations_for(target: RunningTarget, seconds: float) -> int:
    per_iteration = httpx.get(f"{target.url}/test/calibrate?samples=5", timeout=30).json()
    return max(1, round(seconds / per_iteration["seconds_per_iteration"]))


def simultaneous(url: str, count: int) -> list[dict[str, Any]]:
    """`count` requests on their own connections, sent together; the server's bodies back."""
    with ThreadPoolExecutor(count) as pool:
        responses = list(pool.map(lambda _: httpx.get(url, timeout=60), range(count)))
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses]
    return [r.json() for r in responses]


def intervals(bodies: list[dict[str, Any]]) -> list[tuple[float, float]]:
    return [(body["started_at"], body["finished_at"]) for body in bodies]
