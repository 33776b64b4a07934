"""The barrier client 0 serves, over real sockets on 127.0.0.1: every client released by the same
meeting, data published to all, records kept in the one raw log, and no client left waiting for a
client that abandoned a target, went out of step, died or never joined."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from labtester.clients.barrier import BarrierServer
from labtester.clients.crew import Abandoned, Crew, CrewBroken, part
from labtester.rawlog import RawLog, read_raw

Serve = Callable[..., tuple[BarrierServer, list[Crew]]]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    servers: list[BarrierServer] = []
    logs: list[RawLog] = []

    def start(
        count: int, join_timeout_s: float = 30, connect: int | None = None
    ) -> tuple[BarrierServer, list[Crew]]:
        log = RawLog(tmp_path)
        logs.append(log)
        server = BarrierServer(count, log, "127.0.0.1", 0, join_timeout_s).start()
        servers.append(server)
        crews = [Crew(i, count).connect(f"127.0.0.1:{server.port}", 5) for i in range(connect or count)]
        return server, crews

    yield start
    for server in servers:
        server.stop()
    for log in logs:
        log.close()


def together(crews: list[Crew], call: Callable[[Crew], Any]) -> list[Any]:
    """`call` on every crew at once (each client is its own thread, as each is its own process)."""
    results: list[Any] = [None] * len(crews)

    def run(index: int) -> None:
        try:
            results[index] = call(crews[index])
        except Exception as error:
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(crews))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_parts_add_up_and_differ_by_at_most_one() -> None:
    for total in range(0, 12):
        for count in range(1, 5):
            parts = [part(total, i, count) for i in range(count)]
            assert sum(parts) == total and max(parts) - min(parts) <= 1


def test_a_meeting_releases_every_client_with_every_clients_data(serve: Serve, tmp_path: Path) -> None:
    _, crews = serve(3)
    released: list[float] = []

    def meet(crew: Crew) -> dict[int, Any]:
        crew.record({"type": "scenario", "kind": "probe", "n": crew.index})
        if crew.index == 2:
            time.sleep(0.3)  # the last one to arrive decides the release
        answer = crew.meet("fastapi", "bursts io-bound n=3 go", {"sent": crew.index})
        released.append(time.monotonic())
        return answer

    answers = together(crews, meet)
    assert all(a == {0: {"sent": 0}, 1: {"sent": 1}, 2: {"sent": 2}} for a in answers)
    assert max(released) - min(released) < 0.3  # released by the last arrival, not before it
    kept = [r for r in read_raw(tmp_path) if r.get("kind") == "probe"]
    assert sorted((r["client"], r["n"]) for r in kept) == [(0, 0), (1, 1), (2, 2)]


def test_an_abandoned_target_stops_every_client_on_it_and_no_other(serve: Serve) -> None:
    _, crews = serve(2)

    def step(crew: Crew) -> str:
        if crew.index == 1:
            crew.abandon("flask-1x", "calibration failed: timeout")
        try:
            crew.meet("flask-1x", "calibration")
        except Abandoned as error:
            reason = str(error)
        crew.meet("fastapi", "calibration")  # the next target goes on together
        return reason

    assert together(crews, step) == ["client 1: calibration failed: timeout"] * 2


def test_clients_out_of_step_are_told_instead_of_waiting(serve: Serve) -> None:
    _, crews = serve(2)
    results = together(crews, lambda crew: crew.meet("fastapi", f"step {crew.index}"))
    assert all(isinstance(r, Abandoned) and "out of step" in str(r) for r in results)


def test_a_client_that_dies_breaks_the_run_for_the_others(serve: Serve) -> None:
    _, (first, second) = serve(2)

    def die_later() -> None:
        time.sleep(0.3)
        assert second._socket is not None
        second._socket.shutdown(socket.SHUT_RDWR)  # as the kernel closes it when the process dies

    threading.Thread(target=die_later).start()
    with pytest.raises(CrewBroken, match="client 1 stopped"):
        first.meet("fastapi", "flow go")


def test_a_client_that_never_joins_breaks_the_run_in_time(serve: Serve) -> None:
    _, (first,) = serve(2, join_timeout_s=0.5, connect=1)
    started = time.monotonic()
    with pytest.raises(CrewBroken, match="only 1 of 2 clients joined"):
        first.meet("run", "targets")
    assert time.monotonic() - started < 10


def test_alone_a_meeting_returns_at_once_with_its_own_data() -> None:
    assert Crew().meet("fastapi", "x", {"a": 1}) == {0: {"a": 1}}
    assert json.dumps(Crew().meet("run", "end")) == '{"0": null}'
