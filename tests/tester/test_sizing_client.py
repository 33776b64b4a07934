"""What a request meets outside the server's processes, in the sizing's simulation: the load client
as one thread on the same cores (each kind's CPU for it in each latency, and one core at most,
however many the pod has), and the floor measured alone, added to each latency from a draw of its own."""

from __future__ import annotations

import dataclasses

import pytest

from labtester.sizing.configuration import Configuration
from labtester.sizing.document import PodSize
from labtester.sizing.floor import FEWEST, POINTS, floor_of
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import ceiling_per_s, simulate


def sync(workers: int) -> Configuration:
    return Configuration("sync", workers, 1, "shared", True)


LIGHT = RequestKind("/light", 1, cpu_s=0.001, wait_s=0.0)


def with_client(client_s: float, kind: RequestKind = LIGHT) -> list[RequestKind]:
    return [dataclasses.replace(kind, client_s=client_s)]


def test_a_request_alone_takes_the_clients_cpu_and_the_servers() -> None:
    # Half the client's CPU to send it, the server's, then half to read the answer: 1 + 1 + 1 ms.
    alone = simulate(with_client(0.002), sync(1), cores=2, rate_per_s=1, requests=1, arrivals=[0.0])
    assert alone.latencies_s == pytest.approx((0.003,))
    assert simulate([LIGHT], sync(1), 2, 1, 1, arrivals=[0.0]).latencies_s == pytest.approx((0.001,))


def test_the_client_is_one_thread_however_many_cores_the_pod_has() -> None:
    # 4 workers on 4 cores, 1 ms each a request: 4,000/s alone. A client spending 2 ms a request is
    # one thread: it sends and reads 500 a second at most, whatever the cores. (A share of the cores
    # taken off the server, 4 less 2 ms x the rate, would leave it 1,333/s.)
    offered = 1500.0
    client = simulate(with_client(0.002), sync(4), 4, offered, 6000)
    assert client.served_per_s == pytest.approx(500, rel=0.05)
    alone = simulate([LIGHT], sync(4), 4, offered, 6000)
    assert alone.served_per_s == pytest.approx(offered, rel=0.05)
    # On one core it shares it with the server: 1 / (1 + 2 ms), a third of a core for the server.
    one_core = simulate(with_client(0.002), sync(4), 1, offered, 6000)
    assert one_core.served_per_s == pytest.approx(1 / 0.003, rel=0.05)
    # The ceiling the search starts below says so.
    assert ceiling_per_s(with_client(0.002), sync(4), 4) == pytest.approx(500)
    assert ceiling_per_s([LIGHT], sync(4), 4) == pytest.approx(4000)


def test_the_clients_cpu_lengthens_the_tail_where_its_share_of_the_cores_did_not() -> None:
    # The same CPU a second, taken as a thread in the path or as cores off the server: at 60 % of
    # what the cores serve, the thread's requests wait behind the client's work too.
    client_s, rate = 0.0008, 1000.0
    thread = simulate(with_client(client_s), sync(6), 2, rate, 20000)
    share = simulate([LIGHT], sync(6), 2 - rate * client_s, rate, 20000)
    assert thread.p99_s > share.p99_s + client_s


def test_the_floor_is_added_to_each_latency() -> None:
    spread = RequestKind("/spread", 1, 0.001, 0.0, cpu_spread_s=(0.0005, 0.001, 0.0015))
    bare = simulate(with_client(0.0002, spread), sync(2), 2, 200, 2000)
    # A floor of 5 ms alone: every latency 5 ms longer, the run itself the same.
    constant = simulate(with_client(0.0002, spread), sync(2), 2, 200, 2000, floor_s=(0.005,) * 10)
    assert constant.latencies_s == pytest.approx([b + 0.005 for b in bare.latencies_s])
    # A floor of 0 to 9 ms: a draw of it for each request, so its mean on average, its top at the tail.
    floor = tuple(0.001 * i for i in range(10))
    floored = simulate(with_client(0.0002, spread), sync(2), 2, 200, 2000, floor_s=floor)
    added = sum(floored.latencies_s) - sum(bare.latencies_s)
    assert added / len(bare.latencies_s) == pytest.approx(0.0045, rel=0.1)
    assert floored.p99_s == pytest.approx(bare.p99_s + 0.009, abs=0.002)


def test_a_kind_the_client_spends_nothing_on_takes_none_of_its_cpu() -> None:
    # Two kinds at once on two workers: one the client spends 2 ms on, one it spends nothing on.
    kinds = [
        dataclasses.replace(LIGHT, name="/client", client_s=0.002),
        dataclasses.replace(LIGHT, name="/none"),
    ]
    both = simulate(kinds, sync(2), 2, 1, 2, arrivals=[0.0, 0.5], picked=[0, 1])
    assert both.latencies_s == pytest.approx((0.001, 0.003))


def test_the_floor_is_the_measured_beyond_the_modelled_quantile_by_quantile() -> None:
    modelled = [0.001 * (1 + i / 1000) for i in range(1000)]
    measured = [m + 0.002 for m in modelled]
    floor = floor_of(measured, modelled)
    assert len(floor) == POINTS and floor == pytest.approx([0.002] * POINTS)
    # Never below none; fewer than FEWEST measured are no floor.
    assert set(floor_of(modelled, measured)) == {0.0}
    assert floor_of(measured[: FEWEST - 1], modelled) == ()


def test_a_pod_written_before_the_client_moved_to_its_kinds_still_reads() -> None:
    # Schema 7 kept the client's CPU on the pod (`client_cpu_s`); a report rebuilt from it reads it.
    pod = PodSize.model_validate(
        {"cores": 2, "memory_bytes": 1 << 30, "source": "test", "client_cpu_s": 0.0001}
    )
    assert pod.cores == 2 and not hasattr(pod, "client_cpu_s")
