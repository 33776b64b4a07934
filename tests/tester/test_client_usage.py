"""What each client spent, from the merged records' loads: its CPU per request, the most of its
core it used over a step (a burst's too) and of a step it waited for a core, and a client at its
limit named like interference, with a larger P; and the meter's figures, from the sending thread's
own CPU clock and scheduler statistics, beside a real hog on the same core."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from labtester.assembly.checks import _counts_and_clients
from labtester.assembly.usage import client_uses
from labtester.clients.spent import SATURATED, Meter, busy_share, waiting_share
from labtester.results import CountCheck, TargetResult


def load(cpu_s: float, wall_s: float, requests: int, limit: float = 1.0) -> dict[str, object]:
    return {"cpu_s": cpu_s, "wall_s": wall_s, "requests": requests, "core_limit": limit, "host": "h"}


def test_each_clients_cpu_per_request_and_its_busiest_step() -> None:
    records = [
        {"kind": "run", "loads": {"0": load(0.3, 10.0, 1000), "1": load(9.5, 10.0, 1000)}},
        {"kind": "run", "loads": {"0": load(0.1, 10.0, 500), "1": load(0.01, 0.01, 0)}},  # empty part
    ]
    first, second = client_uses("flow", records)
    assert (first.client, first.requests) == (0, 1500) and not first.saturated
    assert abs(first.cpu_per_request_s - 0.4 / 1500) < 1e-12  # type: ignore[operator]
    assert second.saturated and second.core_share == 0.95  # the empty step says nothing
    # A pod limited to half a core is at its limit at half a core.
    (limited,) = client_uses("flow", [{"kind": "run", "loads": {"0": load(0.45, 1.0, 10, 0.5)}}])
    assert limited.saturated and limited.core_share == 0.9


def test_a_client_at_its_limit_is_named_with_a_larger_p() -> None:
    target = TargetResult(name="fastapi", url="http://x", measure=True, ready=True, info=None)
    target.clients = client_uses("flow", [{"kind": "run", "loads": {"0": load(9.5, 10.0, 1000)}}])
    target.counts = [CountCheck(shape="flow", sent=10, counted=9, by_route={"/test/fan-out": 9})]
    found = _counts_and_clients(target, clients=2)
    assert [f.kind for f in found] == ["failure", "interference"]
    assert "the server counted 9 flow requests, the clients sent 10" in found[0].text
    assert "client 0 used 95 % of its core" in found[1].text and "--clients 4" in found[1].text


def test_a_burst_is_judged_and_a_client_starved_of_a_core_is_at_its_limit() -> None:
    # A burst's step is short (0.2 s here): judged as any other, by its sending thread's figures.
    (burst,) = client_uses("bursts", [{"kind": "burst", "loads": {"0": load(0.19, 0.2, 3)}}])
    assert burst.saturated and burst.core_share == pytest.approx(0.95)
    # A client whose thread waited for a core most of a step used little CPU, yet was at its limit.
    starved = {**load(0.1, 1.0, 50), "run_queue_s": 0.8}
    (use,) = client_uses("flow", [{"kind": "run", "loads": {"1": starved}}])
    assert use.saturated and use.waiting_share == pytest.approx(0.8) and use.run_queue_s == 0.8
    target = TargetResult(name="fastapi", url="http://x", measure=True, ready=True, info=None)
    target.clients = [use]
    # Starved by the machine, not busy sending: more clients would not help, and it says so.
    (finding,) = _counts_and_clients(target, clients=2)
    assert "client 1 waited for a core 80 % of a step (it used 10 % of one)" in finding.text
    assert "The machine, not the server" in finding.text and "--clients" not in finding.text


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_meter_reads_the_sending_threads_cpu_and_its_wait_for_a_core() -> None:
    # Another thread's CPU is not the sending thread's load (the barrier's threads, for one).
    meter = Meter().start()
    other = threading.Thread(target=spin, args=(0.3,))
    other.start()
    other.join()
    quiet = meter.read(1)
    assert quiet["cpu_s"] < quiet["process_cpu_s"] / 3
    # A process spinning on the same one core: the thread that wants it waits on the run queue.
    core = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(hog.pid, {core})
        os.sched_setaffinity(0, {core})
        meter = Meter().start()
        spin(1.0)
        crowded = meter.read(1)
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()
    assert crowded["run_queue_s"] is not None, "no /proc/thread-self/schedstat here"
    assert waiting_share(crowded) > 0.2 and busy_share(crowded) > SATURATED  # type: ignore[operator]
