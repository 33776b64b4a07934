"""cpu_s measures the work, not the wait for a core: real gunicorn workers sharing one CPU."""

from __future__ import annotations

import os
import statistics

import httpx

from labtester.launcher import RunningTarget
from labtester.stats import max_overlap
from tests.conftest import StartTarget
from tests.services.work import intervals, iterations_for_cpu, simultaneous

WORK_SECONDS = 0.3
TOGETHER = 3
CLOCK_GRANULARITY_S = 0.001


def pin_to_one_cpu(target: RunningTarget) -> int:
    """Every process of the server on one CPU (workers gunicorn forks later inherit it)."""
    cpu = min(os.sched_getaffinity(0))
    for process in target.tree():
        process.cpu_affinity([cpu])
    assert all(p.cpu_affinity() == [cpu] for p in target.tree())
    return cpu


def test_cpu_s_stays_the_work_while_duration_grows_with_sharing(start: StartTarget) -> None:
    # gunicorn 1x told it has three cores, given one: three sync workers share a single CPU, as
    # in a container whose CPU quota is smaller than the cores its worker count assumed.
    target = start("flask-1x", LAB_CPU_CORES=str(TOGETHER))
    assert httpx.get(f"{target.url}/info").json()["workers"] == TOGETHER
    pin_to_one_cpu(target)
    iterations = iterations_for_cpu(target, "sync-cpubound", WORK_SECONDS, TOGETHER + 1)
    url = f"{target.url}/test/sync-cpubound/{iterations}"

    alone = simultaneous(url, 1) + simultaneous(url, 1)
    together = simultaneous(url, TOGETHER)
    alone += simultaneous(url, 1) + simultaneous(url, 1)

    # Three at once, on three workers, really ran together on the one CPU.
    assert max_overlap(intervals(together)) == TOGETHER
    assert len({body["pid"] for body in together}) == TOGETHER
    for body in alone + together:
        assert 0 < body["cpu_s"] <= body["duration_s"] + CLOCK_GRANULARITY_S, body
    # One CPU cannot give more CPU seconds than the wall seconds they spanned.
    span = max(b["finished_at"] for b in together) - min(b["started_at"] for b in together)
    assert sum(b["cpu_s"] for b in together) <= span + CLOCK_GRANULARITY_S
    # Each got a share of the core: its wall time grew well past its CPU time (a ratio within each
    # request, so the CPU's speed drift cancels out): about 3x when the three start at once, 1x
    # unshared; the three sends' own stagger left 1.82x once, on requests of 65 ms where the wall
    # clock's calibration asked 300 (the work is sized from its CPU time now) ...
    assert sum(b["duration_s"] for b in together) / sum(b["cpu_s"] for b in together) > 1.5
    # ... while its CPU time stayed the work it did. Measured seconds apart, these two can differ
    # by the CPU's own drift (+-25 % here), never by the factor of three the sharing gives.
    ratio = statistics.median(b["cpu_s"] for b in together) / statistics.median(b["cpu_s"] for b in alone)
    assert 0.6 < ratio < 1.67, (ratio, alone, together)
