"""Each serving process counts its full garbage collections and their CPU (measure.full_collections),
into /metrics at its requests' ends: every one a request set off is there, by the pid that ran it."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from labtester.launcher import RunningTarget
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


@pytest.fixture(scope="module", params=["gthread", "uvicorn"])
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
