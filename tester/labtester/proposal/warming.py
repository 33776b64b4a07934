"""Before a proof, each of the configuration's processes serves each request of the mix once: a
process's first request of a path pays the path's one-time costs (cold.py), which minutes of
traffic do not. Started fresh, a proof's processes paid them inside its runs: sqladmin's proposal
(granian-asgi, 4 workers) at 0.6/s measured its requests at 2.3x the plan's CPU, and its requests
alone (its floor) took a cold list page's half second as the model's miss.

The tester cannot address a process: it sends as many requests of a kind as there are processes,
each on a new connection a moment after the last, and again for the kinds that some process has not
answered yet (by the process each response names), for at most ROUNDS rounds."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from labtester.load import LoadClient, Sample
from labtester.scenarios.common import encode
from labtester.traffic import Outgoing

ROUNDS = 8  # here 4 uvicorn workers took 1-2 rounds (5 tries), 3 took 1-5
# Between one connection and the next: a process that accepted one and is serving it leaves the next
# to another. Sent at once, uvicorn's three workers took all of 8 rounds' connections in one process
# (its loop accepts every one waiting); 10 ms apart, longer than a warm request (8 ms), once too.
STAGGER_S = 0.002
WARMING = "warming"  # its raw record's kind


async def _warm(
    url: str, kinds: Sequence[str], processes: int, timeout_s: float, requests: dict[str, Outgoing]
) -> list[Sample]:
    samples: list[Sample] = []
    for _ in range(ROUNDS):
        served = {k: {s.pid for s in samples if s.path == k and s.ok and s.pid is not None} for k in kinds}
        left = [k for k in kinds if len(served[k]) < processes]
        if not left:
            break
        async with LoadClient(url, timeout_s) as client:  # new connections: a kept one stays with its process
            sent = []
            for kind in left:
                for _ in range(processes):
                    request = requests.get(kind)
                    sent.append(asyncio.ensure_future(client.send(request) if request else client.get(kind)))
                    await asyncio.sleep(STAGGER_S)
            samples += await asyncio.gather(*sent)
        if not any(s.pid is not None for s in samples):
            break  # no response names its process: nothing tells the processes apart
    return samples


def warmed(
    url: str, kinds: Sequence[str], processes: int, timeout_s: float, requests: dict[str, Outgoing]
) -> dict[str, object]:
    """Each kind sent until `processes` processes answered it (at most ROUNDS rounds of `processes` at
    once); the raw record's fields: the samples, and the kinds some process never answered."""
    samples = asyncio.run(_warm(url, kinds, processes, timeout_s, requests))
    served = {k: {s.pid for s in samples if s.path == k and s.ok and s.pid is not None} for k in kinds}
    return {
        "step": WARMING,
        "samples": encode(samples),
        "processes": processes,
        "unwarmed": sorted(k for k in kinds if len(served[k]) < processes),
    }
