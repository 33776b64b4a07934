"""What each client spent on each load shape of a target, from the merged records' `loads`, and
the server's request counts held against every client's sends (the merged rows)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from labtester.clients.spent import SATURATED, busy_share, core_share, waiting_share
from labtester.prometheus import SentCount
from labtester.rawlog import Record
from labtester.results import ClientUse, CountCheck, TargetResult
from labtester.scenarios.bursts.analyse import BurstsSummary
from labtester.scenarios.together import DROPPED


def client_uses(shape: str, records: list[Record]) -> list[ClientUse]:
    steps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        for client, load in (record.get("loads") or {}).items():
            steps[int(client)].append(load)
    uses = []
    for client, loads in sorted(steps.items()):
        requests = sum(int(load["requests"]) for load in loads)
        cpu = sum(float(load["cpu_s"]) for load in loads)
        waits = [float(load["run_queue_s"]) for load in loads if load.get("run_queue_s") is not None]
        busiest = max((s for s in map(busy_share, loads) if s is not None), default=None)
        uses.append(
            ClientUse(
                shape=shape,
                client=client,
                requests=requests,
                cpu_s=cpu,
                cpu_per_request_s=cpu / requests if requests else None,
                core_share=max((s for s in map(core_share, loads) if s is not None), default=None),
                run_queue_s=sum(waits) if waits else None,
                waiting_share=max((s for s in map(waiting_share, loads) if s is not None), default=None),
                core_limit=float(loads[0].get("core_limit") or 1.0),
                saturated=busiest is not None and busiest >= SATURATED,
            )
        )
    return uses


# The fields of a record that hold rows of requests: the load, and the flow's requests alone.
REQUEST_TABLES = ("samples", "baseline")


def sent_rows(records: list[Record]) -> int:
    """Requests that left a client, over the merged records of a load-client shape."""
    return sum(
        1
        for record in records
        if record.get("kind", "run") == "run"
        for table in (
            record[name] for name in REQUEST_TABLES[: 1 if record.get("unloaded") else 2] if name in record
        )
        for row in table["rows"]
        if row[table["fields"].index("error")] != DROPPED
    )


def count_checks(shape: str, records: list[Record]) -> list[CountCheck]:
    counts = [r for r in records if r.get("kind") == "counts"]
    return [
        CountCheck(
            shape=f"{shape} {r['of'].split(' ', 1)[-1]}" if r.get("of") else shape,
            sent=sent_rows([run for run in records if not r.get("of") or run.get("step") == r["of"]]),
            counted=r["counted"],
            by_route=r["by_route"],
        )
        for r in counts
    ]


def sent_counts(target: TargetResult) -> list[SentCount]:
    """Every load window of a target: the sum of all clients' sends beside the server's count."""
    found = [
        SentCount(
            window=f"bursts {e.name}", route=e.metrics.route, sent=e.metrics.sent, server=e.metrics.counted
        )
        for summary in target.scenarios.values()
        if isinstance(summary, BurstsSummary)
        for e in summary.endpoints
        if e.metrics
    ]
    found += [
        SentCount(window=check.shape, route=", ".join(check.by_route), sent=check.sent, server=check.counted)
        for check in target.counts
    ]
    return found
