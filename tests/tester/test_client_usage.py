"""What each client spent, from the merged records' loads: its CPU per request, the most of its
core it used over a step, and a client at its limit named like interference, with a larger P."""

from __future__ import annotations

from labtester.clients.usage import CountCheck, client_uses
from labtester.findings.checks import _counts_and_clients
from labtester.results import TargetResult


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
