"""What one client costs: CPU seconds per request of the lab's load client, Locust's FastHttpUser and
wrk, each as its own process in a closed loop on the same endpoint, one after the other in one run.

Each client's CPU is counted over its load alone, not its start-up (Locust imports gevent and much
more): the lab's client and Locust measure their own process's CPU around the loop
(`python -m labtester.bench.clientcost lab|locust URL CONCURRENCY SECONDS` prints it as JSON);
wrk is C and starts in microseconds, so its children's CPU (rusage) is taken whole.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from labtester.load import LoadClient
from labtester.scenarios.sweep import level


@dataclass(frozen=True)
class ClientCost:
    name: str
    requests: int
    cpu_s: float
    wall_s: float

    @property
    def cpu_per_request_s(self) -> float:
        return self.cpu_s / self.requests if self.requests else float("nan")

    @property
    def per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s else 0.0


def _lab(url: str, concurrency: int, seconds: float) -> dict[str, float]:
    parts = urlsplit(url)

    async def load() -> int:
        async with LoadClient(f"{parts.scheme}://{parts.netloc}", 30) as client:
            await level(client, parts.path, concurrency, 0.5)  # connections opened, code warm
            cpu, wall = time.process_time(), time.perf_counter()
            samples = await level(client, parts.path, concurrency, seconds)
            spent = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}
        print(json.dumps({"requests": sum(s.ok for s in samples), **spent}))
        return 0

    return {"exit": asyncio.run(load())}


def _locust(url: str, concurrency: int, seconds: float) -> dict[str, float]:
    # Imported by name: Locust is `make bench`'s alone (the `bench` extra), not every install's.
    gevent, locust = importlib.import_module("gevent"), importlib.import_module("locust")
    environment_module = importlib.import_module("locust.env")
    parts = urlsplit(url)

    def get(user: Any) -> None:
        user.client.get(parts.path)

    closed = type(
        "Closed",
        (locust.FastHttpUser,),
        {"host": f"{parts.scheme}://{parts.netloc}", "wait_time": locust.constant(0), "tasks": [get]},
    )
    environment = environment_module.Environment(user_classes=[closed], events=locust.events)
    runner = environment.create_local_runner()
    runner.start(concurrency, spawn_rate=concurrency * 10)
    gevent.sleep(1.0)  # every user started and connected
    done = environment.stats.total.num_requests
    cpu, wall = time.process_time(), time.perf_counter()
    gevent.sleep(seconds)
    spent = {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}
    requests = environment.stats.total.num_requests - done
    runner.quit()
    print(json.dumps({"requests": requests, **spent}))
    return {}


def measure(kind: str, url: str, concurrency: int, seconds: float) -> ClientCost:
    """One client's cost, run in its own process."""
    if kind == "wrk":
        return _wrk(url, concurrency, seconds)
    command = [sys.executable, "-m", "labtester.bench.clientcost", kind, url, str(concurrency), str(seconds)]
    output = subprocess.run(command, capture_output=True, text=True, check=True, timeout=seconds + 120)
    found = json.loads(output.stdout.strip().splitlines()[-1])
    return ClientCost(kind, int(found["requests"]), float(found["cpu_s"]), float(found["wall_s"]))


def _wrk(url: str, concurrency: int, seconds: float) -> ClientCost:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = ["wrk", "-t1", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"(\d+) requests in", output)
    if not found:
        raise ValueError(f"unexpected wrk output:\n{output}")
    return ClientCost("wrk", int(found.group(1)), cpu, wall)


if __name__ == "__main__":
    kind, url, concurrency, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    {"lab": _lab, "locust": _locust}[kind](url, concurrency, seconds)
