"""A proof run's warm-up and the prediction made from it, during the run.

The proof offers its rate from an idle server; its first seconds (`warmup_of` the run) are served
and measured but not judged. Once every warm-up request was answered, the CPU they used, in the
very configuration proved, feeds the model for the window that follows, and that prediction is made
then, in a thread beside the sends, from nothing the window measured: the plan's prediction drew
each request's CPU from the flows minutes earlier, and the Flask shop's proofs used 0.77 to 1.19
times that, each p99 following its own.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any

from labtester.load import Sample
from labtester.sizing import window
from labtester.sizing.document import SizedSummary, warmup_of
from labtester.sizing.search import Pod


class Warmup:
    """One proof run's warm-up: when it ends, and what it predicted for the window after it."""

    def __init__(self, summary: SizedSummary, rate_per_s: float, duration_s: float) -> None:
        self.summary, self.rate_per_s, self.duration_s = summary, rate_per_s, duration_s
        self.ends_s = warmup_of(duration_s)
        self.made: dict[str, Any] = {}

    async def after(
        self, sent: Sequence[asyncio.Task[None]], samples: list[Sample], now: Callable[[], float]
    ) -> None:
        """Once the warm-up's requests (`sent`) were answered, the prediction from their `samples`."""
        await asyncio.gather(*sent)
        await self.predict([s for s in samples if s.scheduled_s < self.ends_s], now)

    async def predict(self, answered: Sequence[Sample], now: Callable[[], float]) -> None:
        """The window predicted from the warm-up's `answered` requests, on the pod's cores as the
        plan had them: only the requests' CPU is the run's own."""
        kinds, pod = self.summary.kinds, self.summary.pod
        used = window.cpu_used(kinds, answered)
        cores = Pod(pod.cores, pod.memory_bytes, pod.client_cpu_s).cores_left(self.rate_per_s)
        per_s, p99 = await asyncio.to_thread(
            window.predicted_window, self.summary, self.rate_per_s, cores, self.duration_s, self.ends_s, used
        )
        self.made = {
            "predicted_per_s": per_s,
            "predicted_p99_s": p99 if math.isfinite(p99) else None,  # nan: no send after the warm-up
            "cpu_ratio": window.used_ratio(kinds, used),
            "cpu_s": {name: sum(cpu) / len(cpu) for name, cpu in used.items() if cpu},
            "requests": sum(len(cpu) for cpu in used.values()),
            "made_at_s": now(),  # on the run's clock: after the warm-up, before its window's end
        }

    def recorded(self) -> dict[str, object]:
        """What the run's record keeps: the warm-up's length, and its prediction where it made one."""
        return {"warmup_s": self.ends_s, "warmup": self.made or None}
