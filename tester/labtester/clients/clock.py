"""How far each client's clock is from client 0's: measured at joining and at the end, NTP-style
over the barrier (crew.py: the barrier's time against the middle of the quickest of a few
exchanges, right within half its round trip). Each client's makespan is taken on its own clock; this
says how far apart the clocks were, so a figure that crosses clients (the servers' start times
against the releases) can be read with its error."""

from __future__ import annotations

from pydantic import BaseModel

from labtester.rawlog import Record


class ClientClock(BaseModel):
    """One client's clock against the barrier's (client 0's process) at one moment of the run."""

    client: int
    at: str  # "join" or "end"
    offset_s: float  # the barrier's clock less this client's
    round_trip_s: float  # the exchange's: the offset is right within half of it


def client_clocks(records: list[Record]) -> list[ClientClock]:
    return sorted(
        (ClientClock.model_validate(r) for r in records if r.get("type") == "clock"),
        key=lambda c: (c.client, c.at != "join"),
    )


def skew_text(clocks: list[ClientClock]) -> str:
    """Each client's clock against client 0's, at joining and at the end, for the report."""
    if len({c.client for c in clocks}) < 2:
        return ""
    zero = {c.at: c for c in clocks if c.client == 0}
    parts = [
        f"client {c.client} at {c.at} {(zero[c.at].offset_s - c.offset_s) * 1000:+.3f} ms "
        f"(± {(zero[c.at].round_trip_s + c.round_trip_s) * 500:.3f} ms)"
        for c in clocks
        if c.client != 0 and c.at in zero
    ]
    return (
        "Clocks against client 0's (NTP-style over the barrier; each makespan is taken on its own "
        f"client's clock): {', '.join(parts)}."
    )
