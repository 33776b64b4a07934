"""Each serving process counts its full garbage collections and their CPU (measure.full_collections),
into /metrics at its requests' ends: every one a request set off is there, by the pid that ran it."""

from __future__ import annotations

import gc
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
from labtester.servertiming import parse
from measure import full_collections
from measure.full_collections import Published
from tests.services.apps import BARE_MODULE, CONFIGURATIONS, bare_app_dir, serve_app

COLLECTS = 8
# A collection's CPU read by the app around gc.collect() and by the callback from its start to its
# end: the same stretch of the same thread's clock, less the call's own steps.
AGREEMENT = 0.15


def counted(target: RunningTarget) -> tuple[dict[str, float], float]:
    """Full collections by pid, and their CPU over every process, as /metrics has them."""
    text = httpx.get(target.metrics_url or "", timeout=30).text
    by_pid: dict[str, float] = {}
    cpu_s = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "lab_full_collections_total":
                by_pid[sample.labels["pid"]] = by_pid.get(sample.labels["pid"], 0.0) + sample.value
            elif sample.name == "lab_full_collections_cpu_seconds_total":
                cpu_s += sample.value
    return by_pid, cpu_s


@pytest.fixture(scope="module", params=["gthread", "uvicorn", "granian-wsgi"])
def served_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningTarget]:
    directory: Path = bare_app_dir(tmp_path_factory.mktemp("collections"))
    configuration = next(c for c in CONFIGURATIONS if c["name"] == request.param)
    interface = configuration["interface"]
    served = serve_app(f"{BARE_MODULE}:{interface}", configuration, ["/collect"], pythonpath=directory)
    yield served
    served.stop()


def test_every_full_collection_a_request_ran_is_counted_by_its_process(served_app: RunningTarget) -> None:
    before, before_cpu = counted(served_app)
    # One at a time: a gc.collect() while another thread's collection runs returns at once, none run.
    with httpx.Client(timeout=60) as client:
        replies = [client.get(f"{served_app.url}/collect").json() for _ in range(COLLECTS)]
    asked = Counter(str(reply["pid"]) for reply in replies)

    def short(after: dict[str, float]) -> list[str]:
        """The processes that counted fewer than they were asked to run."""
        return [pid for pid, count in asked.items() if after.get(pid, 0.0) - before.get(pid, 0.0) < count]

    # A request's end (where its process's collections reach /metrics) comes just after its last
    # byte: read again until each process has them all, or for 10 s.
    deadline = time.monotonic() + 10
    while short((after := counted(served_app))[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not short(after[0]), (asked, before, after)
    used = sum(reply["cpu_s"] for reply in replies)
    assert used > 0
    # Collections the processes ran on their own meanwhile add to both; none counted is too little.
    assert after[1] - before_cpu >= (1 - AGREEMENT) * used, (after[1] - before_cpu, used)


def test_each_answer_carries_its_process_s_count_so_far_as_the_metrics_have_it(
    served_app: RunningTarget,
) -> None:
    # Its Server-Timing's `lab-gc` (count, CPU) as its headers left, the /collect request's own
    # collection in it: a client reads the collections between two answers of one process.
    with httpx.Client(timeout=60) as client:
        answers = [client.get(f"{served_app.url}/collect") for _ in range(COLLECTS)]
    read = [(parse(a.headers.get_list("server-timing")), a.json()) for a in answers]
    by_pid: dict[int, list[tuple[int, float, float]]] = {}
    for timing, reply in read:
        assert timing.pid == reply["pid"] and timing.collections is not None, timing
        by_pid.setdefault(reply["pid"], []).append(
            (timing.collections, timing.collections_cpu_s or 0.0, reply["cpu_s"])
        )
    for pid, mine in by_pid.items():
        # Each answer's own collection is in its count: at least one more than the one before.
        assert all(later[0] >= earlier[0] + 1 for earlier, later in itertools.pairwise(mine)), mine
        ran_s = sum(cpu for _, _, cpu in mine[1:])
        assert mine[-1][1] - mine[0][1] >= (1 - AGREEMENT) * ran_s, (pid, mine)
    # The same counter /metrics publishes at each request's end: never fewer than its last answer said.
    deadline = time.monotonic() + 10
    while True:
        metrics = counted(served_app)[0]
        behind = [pid for pid, mine in by_pid.items() if metrics.get(str(pid), 0.0) < mine[-1][0]]
        if not behind or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not behind, (by_pid, metrics)


def test_published_from_the_first_call_at_zero_then_what_ran_since_and_never_waited_for() -> None:
    ran = [(0, 0.0)]  # what the process's callback counted so far
    counts: list[float] = []
    cpu: list[float] = []
    published = Published(counts.append, cpu.append, read=lambda: ran[-1])
    published()  # none ran yet: the series at 0, so "none ran" reads apart from "not counted"
    assert (counts, cpu) == ([0], [0.0])
    published()  # nothing new: nothing written
    assert counts == [0]
    ran.append((2, 0.05))
    published()
    assert (counts[-1], cpu[-1]) == (2, pytest.approx(0.05))
    ran.append((3, 0.08))
    with published._lock:  # another thread at it (or a finalizer inside this one): not waited for
        published()
    assert counts[-1] == 2
    published()  # the next end publishes what that one would have
    assert (counts[-1], cpu[-1]) == (1, pytest.approx(0.03))


def test_a_forked_child_counts_its_own_from_zero_and_keeps_counting() -> None:
    # gunicorn forks its workers from a master that imported the lab (and ran collections of its
    # own): each worker's count starts at 0 and is its own, the callback and `counted()` kept.
    full_collections.install()
    gc.collect()
    parent_before = full_collections.totals()
    assert parent_before[0] >= 1 and full_collections.counted() == parent_before
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: what it inherited, then one collection of its own
        try:
            inherited, after_fork = full_collections.counted(), None
            gc.collect()
            after_fork = full_collections.counted()
            os.write(write, json.dumps([inherited, after_fork]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        inherited, after_fork = json.loads(pipe.read())
    os.waitpid(child, 0)
    assert inherited == [0, 0.0]
    assert after_fork[0] >= 1 and after_fork[1] > 0
    assert full_collections.totals()[0] == parent_before[0]  # the child's is not the parent's
