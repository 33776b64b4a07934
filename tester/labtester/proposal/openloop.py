"""A proof's open loop: the mix's sends at their scheduled times, each measured from its schedule."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labtester.load import LoadClient, Sample
from labtester.sizing.arrivals import SEED, proof_arrivals, proof_kinds
from labtester.sizing.candidates import MOST_OUTSTANDING
from labtester.sizing.kinds import MixItem
from labtester.traffic import Outgoing

if TYPE_CHECKING:
    from labtester.proposal.warmup import Warmup


async def offer(
    url: str,
    mix: Sequence[MixItem],
    rate_per_s: float,
    duration_s: float,
    timeout_s: float,
    seed: int = SEED,
    requests: dict[str, Outgoing] | None = None,
    warmup: Warmup | None = None,
) -> tuple[list[Sample], float, float]:
    """Poisson arrivals of the mix's kinds in their weights, exactly rate x duration of them
    (`proof_arrivals`: the rate a proof offers is the rate it was asked for; `proof_kinds`: the
    kinds its prediction serves); each latency from its scheduled send. `requests`: each kind's
    request as the team's traffic writes it (method, headers, body); a kind without one is a GET of
    its name. `warmup`: the cores it left, read at its end (its prediction comes after the run:
    its simulation beside the sends stalled them). Returns the samples, the run's wall time and the
    epoch its clock started at (`tail.py` sets the server's stamps against it)."""
    times = proof_arrivals(rate_per_s, duration_s, seed)
    kinds = proof_kinds([item.weight for item in mix], len(times), seed)
    samples: list[Sample] = []
    outstanding = 0
    async with LoadClient(url, timeout_s) as client:

        async def send(path: str, scheduled_s: float) -> None:
            nonlocal outstanding
            request = (requests or {}).get(path)
            sent = client.send(request, scheduled_s) if request else client.get(path, scheduled_s)
            samples.append(await sent)
            outstanding -= 1

        tasks: list[asyncio.Task[None]] = []
        for scheduled_s, kind in zip(times, kinds, strict=True):
            path = mix[kind].name
            delay = scheduled_s - client.now()
            if delay > 0:
                await asyncio.sleep(delay)
            if warmup is not None and scheduled_s >= warmup.ends_s:
                warmup.end(client.now)
            if outstanding >= MOST_OUTSTANDING:
                samples.append(Sample(path, scheduled_s, client.now(), 0.0, None, "dropped"))
            else:
                outstanding += 1
                tasks.append(asyncio.create_task(send(path, scheduled_s)))
        await asyncio.gather(*tasks)
        return samples, client.now(), client.origin_at


class Kind:
    """A mix item by name and weight (the traffic file's request replaces it)."""

    def __init__(self, name: str, weight: float) -> None:
        self.name, self.weight = name, weight
