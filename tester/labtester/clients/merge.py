"""The merge: every client's records of one step of the plan joined into one record, before any
statistic is computed. Each load shape says how its records join (LoadShape.join); the rows keep
the client that sent them, so the merged record holds every request of every client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from labtester.clients.spent import host
from labtester.rawlog import Record


def client_of(record: Record) -> int:
    return int(record.get("client", 0))


def joined(parts: dict[int, tuple[float, list[dict[str, Any]]]]) -> Record:
    """One burst from every client's part (its release on its own clock, its requests): the
    requests in client order, each client's release beside them, the earliest as the burst's."""
    return {
        "n": sum(len(requests) for _, requests in parts.values()),
        "released_at": min(released for released, _ in parts.values()),
        "requests": [request for client in sorted(parts) for request in parts[client][1]],
        "releases": {str(client): released for client, (released, _) in parts.items()},
    }


def leader_record(records: list[Record]) -> Record:
    """Client 0's record of a step (it alone records the machine, the census, the scrapes)."""
    return min(records, key=client_of)


def loads(records: list[Record]) -> dict[str, Any]:
    """Each client's own load over the step, by client index."""
    return {str(client_of(r)): r["load"] for r in sorted(records, key=client_of) if r.get("load")}


def followers_cpu_s(records: list[Record], lead: Record) -> float:
    """CPU time the other clients' processes used on client 0's machine: the tester's too, not a
    neighbour's (their whole process's, not only the sending thread's: the machine saw it all)."""
    here = (lead.get("load") or {}).get("host", host())
    return sum(
        float(r["load"].get("process_cpu_s", r["load"]["cpu_s"]))
        for r in records
        if r is not lead and r.get("load") and r["load"].get("host") == here
    )


def with_clients_cpu(machine: dict[str, Any] | None, records: list[Record], lead: Record) -> Any:
    """Client 0's machine snapshots, with what the other clients on its machine used (machine.py)."""
    if not machine:
        return machine
    return {**machine, "clients_s": followers_cpu_s(records, lead)}


def join_steps(records: list[Record], joins: Mapping[str, Callable[[list[Record]], Record]]) -> list[Record]:
    """The raw log with every step's records joined by its shape's join (by shape name), in the
    order steps first appear; a record of a shape without one stays as it is."""
    groups: dict[tuple[str, str, str, int], list[Record]] = {}
    order: list[Record | tuple[str, str, str, int]] = []
    seen: dict[tuple[str, str, str, int], int] = {}  # a client's records of one step so far
    for record in records:
        if record.get("type") == "scenario" and record.get("step") and record.get("scenario") in joins:
            step = (record["target"], record["scenario"], record["step"])
            # A step run twice (a repeated level) is two runs: each client's n-th joins the n-th.
            occurrence = seen.get((*step, client_of(record)), 0)
            seen[(*step, client_of(record))] = occurrence + 1
            key = (*step, occurrence)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(record)
        else:
            order.append(record)
    return [joins[item[1]](groups[item]) if isinstance(item, tuple) else item for item in order]
