"""A proof run's warm-up and the prediction of its window made from it.

The proof offers its rate from an idle server; its first seconds (`warmup_of` the run) are served
and measured but not judged. What moves between the flows the plan drew from and the proof, the
warm-up measures in the very configuration proved: the CPU each kind's requests used (the Flask
shop's proofs used 0.77 to 1.19 times what the plan drew from the flows minutes before, and each
p99 followed its own), the cores the rest of the machine left the server and the load client (other
processes, steal), and the client's CPU per request as the open loop spends it (the Flask shop's
light path, 2026-11-30: 0.13-0.18 ms on kept connections, 0.47-0.49 on sync's, 1.2-1.9x what the
flows' closed loops spent: a thread on those cores in the model, events.py). Once the run is over
and measured, the model predicts the window from the
warm-up's requests (and earlier runs') and the cores read at its end: nothing the window measured.
(Made beside the sends, in a thread, its simulation held the sender's GIL: at thousands a second,
seconds of CPU that stalled every light proof's sends by 0.6-4 s as its window began, with up to
1,600 dropped.) A level proved after another in the same configuration adds its requests' CPU.
The server's own CPU per request beyond its requests' (the flows' empty requests put it at 0.24-0.3
ms on gunicorn sync, the Flask shop's proofs at 1.0-2.2 ms) each level takes from its own warm-up,
at its own rate: it falls as the rate rises.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from labtester import machine
from labtester.load import Sample
from labtester.rawlog import Record
from labtester.scenarios.common import decode
from labtester.scenarios.flow.whole import cores_free  # the flow's reading of the same fields
from labtester.sizing import window
from labtester.sizing.arrivals import SEED
from labtester.sizing.collected import counted_in, measured_collections
from labtester.sizing.document import SizedSummary, warmup_of


class Warmup:
    """One proof run's warm-up: when it ends, what it measured, and what it predicted after it.
    `server_cpu`: the serving processes' CPU seconds where they can be read from here, else None
    (a cluster's pod: the cores are then the pod's, as the plan had them). `earlier`: the
    configuration's runs before this one (their records). `floor_s`: what the configuration's
    requests alone took beyond the model (sizing/floor.py), added to each."""

    def __init__(
        self,
        summary: SizedSummary,
        rate_per_s: float,
        duration_s: float,
        server_cpu: Callable[[], float | None],
        earlier: Sequence[Record] = (),
        floor_s: tuple[float, ...] = (),
        seed: int = SEED,
    ) -> None:
        self.summary, self.rate_per_s, self.duration_s = summary, rate_per_s, duration_s
        self.seed = seed  # of the run's sends (its level's)
        self.ends_s = warmup_of(duration_s)
        self.server_cpu = server_cpu
        self.runs = [decode(run["samples"]) for run in earlier]
        self.earlier = [s for samples in self.runs for s in samples if s.ok]
        self.overhead_s = overhead_per_request(earlier)
        self.began = (machine.snapshot(), server_cpu())
        self.floor_s = floor_s
        self.free: float | None = None  # the cores the warm-up left the server and client, at its end
        self.client_cpu_total_s = 0.0  # the load client's CPU over the warm-up (where the server's was read)
        self.server_cpu_total_s: float | None = None  # the serving processes' over the warm-up, where read
        self.now: Callable[[], float] | None = None  # the run's clock, from the warm-up's end
        self.read_at_s = 0.0
        self.made: dict[str, Any] = {}

    def end(self, now: Callable[[], float]) -> None:
        """At the warm-up's end (once): the cores it left the server (reads, no simulation)."""
        if self.now is None:  # its clock first: what was answered by then ran before the CPU read
            self.now, self.read_at_s = now, now()
            self.free = self._cores()

    def _cores(self) -> float | None:
        """The cores the machine left the server and the client over the warm-up (its CPUs less
        every other use); the client's CPU meanwhile kept."""
        (before, cpu_before), after, cpu_after = self.began, machine.snapshot(), self.server_cpu()
        if cpu_before is None or cpu_after is None:
            return None
        self.client_cpu_total_s = machine.between(before, after).tester_s
        self.server_cpu_total_s = cpu_after - cpu_before
        return cores_free({"machine": machine.recorded(before, after)}, cpu_after - cpu_before, tester=False)

    def after(self, samples: Sequence[Sample], origin_at: float | None) -> None:
        """With the run over and measured: the prediction from the warm-up's `samples` (where it ended;
        `origin_at`: the epoch of the run's clock, as a server on this machine stamps its requests)."""
        if self.now is not None:
            warm = [s for s in samples if s.scheduled_s < self.ends_s]
            client = self.client_cpu_total_s / len(warm) if warm and self.free else None
            collections = measured_collections(counted_in(*self.runs, warm), self.summary.kinds)
            own = self.own_overhead(samples, origin_at)
            self.predict(self.earlier + warm, self.now, self.free, client, collections, own)
            self.made["warmup_overhead_s"] = own  # None: not read here (`overhead_s` is then another's)

    def own_overhead(self, samples: Sequence[Sample], origin_at: float | None) -> float | None:
        """The server's own CPU per request over the warm-up: its processes' less what its requests
        used by then, over them, each counted by the share of its time in the app that had passed
        as the CPU was read (its server stamps, on this machine's clock: `origin_at`; without them,
        whole where answered by then), so a heavy path's few requests at work at the warm-up's end
        do not read as the server's. None where its processes' CPU was not read, or not one
        request's worth was done. It falls as the rate rises (gevent 2 x 100 on httpbin: 908 us a
        request at 200/s, 659 at 600, 533 at 1,000, 500 at 1,400, 440 at 1,800), so a level takes
        it at its own rate, not an earlier level's."""
        if not self.server_cpu_total_s or self.server_cpu_total_s <= 0:
            return None
        read_at = None if origin_at is None else origin_at + self.read_at_s  # the server's epoch
        used = requests = 0.0
        for s in samples:
            if not s.ok or s.cpu_s is None:
                continue
            if read_at is not None and s.started_at is not None and s.app_s:
                share = min(1.0, max(0.0, (read_at - s.started_at) / s.app_s))
            else:
                share = 1.0 if s.sent_s + s.latency_s <= self.read_at_s else 0.0
            used, requests = used + share * s.cpu_s, requests + share
        return max(0.0, (self.server_cpu_total_s - used) / requests) if requests >= 1 else None

    def predict(
        self,
        answered: Sequence[Sample],
        now: Callable[[], float],
        free: float | None,
        client_s: float | None,
        collections: tuple[float, float] | None = None,
        overhead_s: float | None = None,
    ) -> None:
        """The window predicted from the `answered` requests' CPU (the earlier runs' and the warm-up's),
        the server's own CPU per request (`overhead_s`, the warm-up's; None: the earlier runs', else
        the plan's), the cores the warm-up left the server and the client (`free`; None: the pod's,
        as planned), the client's
        CPU per request there (`client_s`; None: the plan's), the full collections counted there
        (`collections`: per request, the CPU of one; None: the plan's) and the configuration's floor."""
        kinds, pod = self.summary.kinds, self.summary.pod
        used = window.cpu_used(kinds, answered)
        cores = pod.cores if not free else min(free, pod.cores)
        overhead = overhead_s if overhead_s is not None else self.overhead_s
        args = (self.summary, self.rate_per_s, cores, self.duration_s, self.ends_s, used, overhead)
        run = window.predicted_window(*args, client_s, self.floor_s, collections, self.seed)
        finite = math.isfinite(run.p99_s)  # not: no send after the warm-up
        self.made = {
            "predicted_per_s": run.per_s,
            "predicted_p99_s": run.p99_s if finite else None,
            "p99_band_s": list(run.p99_band_s) if finite else [],
            "cpu_ratio": window.used_ratio(kinds, answered),
            "cpu_s": {name: sum(cpu) / len(cpu) for name, cpu in used.items() if cpu},
            "requests": sum(len(cpu) for cpu in used.values()),
            "cores": cores,
            "cores_free": free,
            "client_cpu_s": client_s,
            "cores_read_at_s": self.read_at_s,  # on the run's clock: at the warm-up's end
            "overhead_s": overhead,
            "server_cpu_s": self.server_cpu_total_s,  # the serving processes' over the warm-up
            "full_collections_per_request": collections[0] if collections else None,
            "made_at_s": now(),  # on the run's clock: after the sends
        }

    def recorded(self) -> dict[str, object]:
        """What the run's record keeps: the warm-up's length, and its prediction where it made one."""
        return {"warmup_s": self.ends_s, "warmup": self.made or None}


def overhead_per_request(runs: Sequence[Record]) -> float | None:
    """The serving processes' CPU per answered request beyond the requests' own, over these runs
    (None where their processes' CPU was not read, or none was answered)."""
    return window.overhead_of(
        [(run["server_cpu_s"], decode(run["samples"])) for run in runs if run.get("server_cpu_s")]
    )
