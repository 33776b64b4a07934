"""One client's share of a load-client shape's run: the parts of the plan that are its own, the
meetings that release every client at once and wait for the last, and client 0's scrape of the
server's request counters around the run (held against every client's sends in the analysis)."""

from __future__ import annotations

from typing import Any

from labtester.clients.crew import Crew
from labtester.clients.spent import Meter
from labtester.control import control_client
from labtester.load import LoadClient, Sample
from labtester.scenarios.base import ShapeContext
from labtester.scrape import scrape, work_counts

CONTROL_TIMEOUT_S = 30
# A send the client gave up before it left (rate's, with too many unanswered): never sent.
DROPPED = "dropped by client (too many unanswered)"


class Together:
    """One client's share of a load shape's run on a target: which parts of the plan are its own,
    and the meetings that release every client at once and wait for the last one to finish. Alone
    (no context: a shape measured directly), every part is its own and meetings return at once."""

    def __init__(self, ctx: ShapeContext | None = None) -> None:
        self.ctx = ctx
        self.crew = ctx.crew if ctx else Crew()
        self.errors: list[str | None] = []  # every client's failures, by type

    @property
    def leader(self) -> bool:
        return self.crew.leader

    def part(self, total: int) -> int:
        return self.crew.part(total)

    def mine(self, position: int) -> bool:
        return self.crew.mine(position)

    def agree(self, step: str, data: Any) -> dict[int, Any]:
        """A meeting that only tells: every client's data by index (client 0 decides for all)."""
        return self.ctx.meet(step, data) if self.ctx else {0: data}

    def go(self, client: LoadClient, step: str) -> Meter:
        """The release: every client has its connections ready; its clock starts here."""
        if self.ctx:
            self.ctx.meet(f"{step} go")
        client.restart_clock()
        return Meter().start()

    def done(self, step: str, client: LoadClient, samples: list[Sample], meter: Meter) -> dict[str, Any]:
        """After this client's last request of the step, until every client's; the record's
        fields that place this client's samples in time and say what it spent."""
        sent = [s for s in samples if s.error != DROPPED]
        fields = {"origin_at": client.origin_at, "load": meter.read(len(sent))}
        mine: dict[str, Any] = {"sent": len(sent), "errors": [s.error for s in sent if s.error]}
        everyone: dict[int, Any] = self.ctx.meet(f"{step} done", mine) if self.ctx else {0: mine}
        self.errors += [e for c in everyone.values() for e in c["errors"]]
        return fields


class RequestCounter:
    """Client 0 scrapes the server's request counters before and after a run; the analysis holds
    what they counted against the requests every client sent (the merged rows)."""

    def __init__(self, ctx: ShapeContext) -> None:
        self.ctx = ctx
        self.url = ctx.target.url + ctx.info.control.metrics
        with control_client(CONTROL_TIMEOUT_S) as control:
            self.before = scrape(control, self.url)

    def record(self, of: str | None = None) -> None:
        """The count, for the run records of step `of` (None: every run of the shape)."""
        with control_client(CONTROL_TIMEOUT_S) as control:
            after = scrape(control, self.url)
        by_route = work_counts(self.before, after, self.ctx.info.control.model_dump().values())
        counted = sum(by_route.values())
        self.ctx.record("counts", step=f"{of or 'run'} counts", of=of, by_route=by_route, counted=counted)
