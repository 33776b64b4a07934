"""The barrier client 0 serves, over real sockets on 127.0.0.1: every client released by the same
meeting, data published to all, records kept in the one raw log, only the run's own clients let in
(its token, an index of 0..P-1, each once), each clock's offset measured, and no client left waiting
for a client that abandoned a target, went out of step, failed, died, went silent, stalled past a
meeting's deadline or never joined."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from labtester.clients import barrier, link
from labtester.clients.barrier import BarrierServer
from labtester.clients.crew import Abandoned, Crew, CrewBroken, part
from labtester.rawlog import RawLog, read_raw

Serve = Callable[..., tuple[BarrierServer, list[Crew]]]
TOKEN = "this-run-s-token-0123456789"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    servers: list[BarrierServer] = []
    logs: list[RawLog] = []

    def start(
        count: int, join_timeout_s: float = 30, connect: int | None = None, meet_timeout_s: float = 60
    ) -> tuple[BarrierServer, list[Crew]]:
        log = RawLog(tmp_path)
        logs.append(log)
        server = BarrierServer(
            count,
            log,
            "127.0.0.1",
            0,
            token=TOKEN,
            join_timeout_s=join_timeout_s,
            meet_timeout_s=meet_timeout_s,
        ).start()
        servers.append(server)
        crews = [
            Crew(i, count).connect(f"127.0.0.1:{server.port}", TOKEN, 5) for i in range(connect or count)
        ]
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
        assert second._link is not None
        second._link._socket.shutdown(socket.SHUT_RDWR)  # as the kernel closes it when the process dies

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


def hello(port: int, message: dict[str, Any]) -> dict[str, Any]:
    """One raw hello, as any program that reaches the port could send; the barrier's answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(json.dumps({"op": "hello", **message}).encode() + b"\n")
        answer: dict[str, Any] = json.loads(sock.makefile("rb").readline())
        return answer


def test_only_the_runs_clients_join_each_index_once(serve: Serve, tmp_path: Path) -> None:
    server, (first,) = serve(2, connect=1)
    for wrong, why in [
        ({"client": 1, "count": 2, "token": "not-" + TOKEN}, "wrong token"),
        ({"client": 1, "count": 2}, "wrong token"),
        ({"client": 2, "count": 2, "token": TOKEN}, "not one of 0..1"),
        ({"client": -1, "count": 2, "token": TOKEN}, "not one of 0..1"),
        ({"client": "1", "count": 2, "token": TOKEN}, "not one of 0..1"),
        ({"client": 0, "count": 2, "token": TOKEN}, "client 0 has joined already"),
    ]:
        assert why in hello(server.port, wrong)["refused"], wrong
    with pytest.raises(CrewBroken, match="refused client 0: client 0 has joined already"):
        Crew(0, 2).connect(f"127.0.0.1:{server.port}", TOKEN, 5)
    # None of them broke the run, or joined it: the real client 1 still does, and they meet.
    second = Crew(1, 2).connect(f"127.0.0.1:{server.port}", TOKEN, 5)
    assert (
        together([first, second], lambda crew: crew.meet("run", "targets", crew.index)) == [{0: 0, 1: 1}] * 2
    )
    assert server.barrier.broken is None and server.barrier.joined == {0, 1}
    # The token is never written: not in the raw log, not in a refusal.
    assert TOKEN not in (tmp_path / "raw.jsonl").read_text()
    assert not any(TOKEN in reason for reason in server.barrier.refused)


def test_a_client_that_fails_stops_every_other_at_once(serve: Serve) -> None:
    _, (first, second) = serve(2)
    threading.Timer(0.3, second.fail, args=("RuntimeError: mid-step",)).start()
    started = time.monotonic()
    with pytest.raises(CrewBroken, match="client 1 stopped: RuntimeError: mid-step"):
        first.meet("fastapi", "flow go")
    assert time.monotonic() - started < 10


def test_a_break_reaches_a_client_that_is_not_at_a_meeting(serve: Serve) -> None:
    _, (first, second) = serve(2)
    heard: list[str] = []
    reached = threading.Event()
    assert first._link is not None
    first._link.on_broken = lambda reason: (heard.append(reason), reached.set())
    second.fail("it was stopped (SIGTERM)")  # while client 0 measures: no meeting pending
    assert reached.wait(10), "client 0 was not told"
    assert heard == ["client 1 stopped: it was stopped (SIGTERM)"]


def test_a_meeting_past_its_deadline_breaks_the_run(serve: Serve) -> None:
    _, (first, _second) = serve(2, meet_timeout_s=0.5)  # client 1 is alive but never comes
    started = time.monotonic()
    with pytest.raises(CrewBroken, match=r"client\(s\) 1 did not reach 'flow go' within 0.5 s"):
        first.meet("fastapi", "flow go")
    assert time.monotonic() - started < 10


def test_a_client_gone_silent_breaks_the_run(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(barrier, "SILENT_S", 1.0)
    monkeypatch.setattr(barrier, "KEEPALIVE_S", 0.2)
    monkeypatch.setattr(link, "KEEPALIVE_S", 0.2)
    server, (first,) = serve(2, connect=1)
    # Client 1 joins and then says nothing, as a peer behind a lost network says nothing.
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as silent:
        silent.sendall(json.dumps({"op": "hello", "client": 1, "count": 2, "token": TOKEN}).encode() + b"\n")
        with pytest.raises(CrewBroken, match="client 1 went silent"):
            first.meet("run", "targets")


def test_a_client_keeps_alive_while_it_measures(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(barrier, "SILENT_S", 1.5)
    monkeypatch.setattr(barrier, "KEEPALIVE_S", 0.2)
    monkeypatch.setattr(link, "KEEPALIVE_S", 0.2)
    _, crews = serve(2)
    time.sleep(3)  # both measure, longer than the silence that would break the run
    assert together(crews, lambda crew: crew.meet("run", "end")) == [{0: None, 1: None}] * 2


def test_each_clock_is_measured_against_the_barriers(serve: Serve, tmp_path: Path) -> None:
    _, crews = serve(2)
    together(crews, lambda crew: crew.meet("run", "targets"))  # ships each joining measurement
    clocks = {r["client"]: r for r in read_raw(tmp_path) if r["type"] == "clock"}
    assert sorted(clocks) == [0, 1]
    for clock in clocks.values():
        # One machine, one clock: each offset within half its round trip of zero.
        assert clock["at"] == "join" and clock["round_trip_s"] > 0
        assert abs(clock["offset_s"]) <= clock["round_trip_s"] / 2 + 1e-3
