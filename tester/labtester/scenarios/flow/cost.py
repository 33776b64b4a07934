"""The whole cost of a team's request, as the results document holds it: what the serving processes
spend per request besides the app (ServingCost, per configuration) and, per configuration and path,
where the processes' CPU over a flow went (PathAccount). Models only: servingcost.py and
accounting.py fill them, the prediction (analyse.py) and the answers (conclude.py, advice.py) read
them, and the sizing reads them from results.json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# Under this share of the serving processes' CPU accounted for, a path's CPU per request is a lower
# bound: the app spent CPU for its requests that the middleware did not see.
ACCOUNTED_SHARE = 0.9


class ServingCost(BaseModel):
    """One configuration's own cost per request, measured on empty requests (the lab's /healthz,
    answered by its control layer behind the server and the CPU middleware: the app does no work)."""

    requests: int = Field(description="Empty requests sent, closed loop, as many at once as the flow's users")
    server_cpu_per_request_s: float | None = Field(
        description="The serving processes' CPU per empty request (their process tree, read before and "
        "after), less the requests' own measured CPU and the idle rate over the same time: the server's, "
        "the framework's plumbing and the middleware's own cost, which no request's Server-Timing holds."
    )
    server_thread_cpu_per_request_s: float | None = Field(
        default=None,
        description="Of server_cpu_per_request_s, what the server spent on the threads that ran the "
        "requests, between them (its `lab_between_requests_cpu_seconds_total`, per empty request; on an "
        "event loop, its thread's CPU between any two request steps; on a pool's threads, between the "
        "calls they ran for requests): measured over each flow again, as "
        "the path's own requests cost the server there; None where the server measures none there.",
    )
    client_cpu_per_request_s: float | None = Field(
        description="The load client's CPU per request where it runs on the serving cores (a target on "
        "127.0.0.1); None where it runs elsewhere."
    )
    idle_cpu_per_s: float | None = Field(
        description="The serving processes' CPU per second with no request, measured just before once "
        "the processes settled, with nothing of the lab's in the window but the census's own reads: no "
        "request's (the loop, heartbeats)."
    )
    processes: int = Field(description="Processes that serve requests (the workers, or the root).")
    users: int | None = Field(
        default=None, description="The empty requests' users, each sending again once answered."
    )
    empty_per_s: float | None = Field(
        default=None,
        description="The empty requests' rate over their run (closed loop, the flow's users at once): "
        "where every slot was busy, a slot's cycle is the slots over it.",
    )
    process_cpu_per_request_s: float | None = Field(
        default=None,
        description="The serving processes' CPU per empty request (their process tree, read before and "
        "after), less the idle rate: of a slot's cycle, what ran on a core.",
    )
    cores_free_of_others: float | None = Field(
        default=None,
        description="The machine's CPUs less what processes other than the target and the lab's client "
        "used over the empty requests (/proc/stat): the cores a sync worker's cycle there was fitted on.",
    )
    slot_delay_s: float | None = Field(
        default=None,
        description="What a sync worker waits a request off every core before the client's close (the "
        "loopback, the wake-ups), fitted once to these empty requests (flow/whole.py `slot_delay`): the "
        "flows' predictions and the sizing's close take it from here. None where it does not apply (not "
        "a sync worker's, fewer users than slots, no core left to fit on) or on records before it.",
    )
    chunks_per_request: float | None = Field(
        default=None,
        description="The response body parts an empty request handed the server (its "
        "`lab_response_chunks_total`, per request: one); None where the server has no such counter.",
    )
    server_cpu_per_chunk_s: float | None = Field(
        default=None,
        description="The server's own CPU per response body part beyond an empty request's, off the "
        "threads that ran the requests: what an empty streamed body (/healthz?chunks=50) cost it there "
        "per request over what an empty request did, per part more (granian-wsgi writes each part from "
        "its Rust threads, which no Python clock sees). None where not measured (no counter, a /healthz "
        "that does not stream).",
    )
    floor_s: list[float] = Field(
        default=[],
        description="The floor (sizing/floor.py): what empty requests alone (evenly spaced at a fifth of "
        "the closed loop's rate, seldom meeting) took from their scheduled send beyond their CPU "
        "on the cores (process_cpu_per_request_s and the local client's), evenly spaced quantiles: the "
        "loopback, the client's and the server's wake-ups. Empty where not measured.",
    )


class PathAccount(BaseModel):
    """Conservation over one flow of one path on one configuration: the serving processes' CPU per
    request, read from the processes themselves, against what the lab accounts for."""

    requests: int = Field(description="Requests of the flow (answered or not): the divisor of every figure.")
    process_cpu_per_request_s: float = Field(
        description="The serving processes' CPU over the flow (census before and after) per request."
    )
    request_cpu_per_request_s: float = Field(
        description="The CPU the serving processes charged to requests over the flow, per request: the "
        "delta of their `lab_request_cpu_seconds_total` (every request's whole account, a streamed body's "
        "later chunks and handed-over calls that ended after their request included; the lab's own "
        "control requests are not in it); where the server has no such counter, the requests' "
        "Server-Timing `lab-cpu` summed (`charged_by`)."
    )
    header_cpu_per_request_s: float | None = Field(
        default=None,
        description="The requests' Server-Timing `lab-cpu`, summed, per request: what the headers held, "
        "up to each response's start (the per-request distribution's figures).",
    )
    charged_by: Literal["counter", "server-timing"] = Field(
        default="server-timing",
        description="Where request_cpu_per_request_s comes from: the processes' counter, or the headers.",
    )
    server_cpu_per_request_s: float = Field(
        description="The server's own cost per request of this path: where the server measured its own "
        "CPU on the threads that ran the flow's requests, between them, that per request (less its "
        "lab's reads', as on empty requests) plus what empty requests cost it elsewhere; otherwise the "
        "configuration's cost on empty requests (ServingCost.server_cpu_per_request_s); and its body "
        "parts beyond an empty request's (chunks_cpu_per_request_s)."
    )
    chunks_per_request: float | None = Field(
        default=None,
        description="The response body parts the flow's requests handed the server, per request (the "
        "lab's reads' left out); None where the server has no such counter.",
    )
    chunks_cpu_per_request_s: float | None = Field(
        default=None,
        description="Of server_cpu_per_request_s, the part for the body parts beyond an empty request's "
        "(ServingCost.server_cpu_per_chunk_s each); None where that cost was not measured.",
    )
    server_measured_cpu_per_request_s: float | None = Field(
        default=None,
        description="Of server_cpu_per_request_s, the part measured over this flow itself on the threads "
        "that ran its requests (`lab_between_requests_cpu_seconds_total`); None where the server "
        "measures none there.",
    )
    no_request_cpu_per_request_s: float = Field(
        description="CPU counted as no request's: the idle rate measured before, over the flow's time, "
        "per request."
    )
    lab_reads_cpu_per_request_s: float = Field(
        default=0.0,
        description="The lab's own reads over the flow (its /metrics scrapes and census, served by the "
        "same processes), per request: the delta of their `lab_control_cpu_seconds_total`, and the "
        "configuration's own cost for each of them; 0 where the server has no such counter (its "
        "requests' total holds them then).",
    )
    full_collections_per_request: float | None = Field(
        default=None,
        description="Full garbage collections the processes ran over the flow (their "
        "`lab_full_collections_total`), per request: each stopped its process, every thread of it (its "
        "CPU is in the figures above, where it ran); None where the server has no such counter.",
    )
    full_collection_cpu_s: float | None = Field(
        default=None,
        description="The CPU one of those took, on average (`lab_full_collections_cpu_seconds_total`); "
        "None where there was none.",
    )
    share: float = Field(
        description="(request + server + no request + the lab's reads) / process: the share of the "
        "processes' CPU accounted for; under 0.9 the path's CPU per request is a lower bound."
    )
    cores_per_process: float = Field(
        description="The processes' CPU rate over the flow divided by the serving processes: the cores a "
        "process really used (above 1 where the work releases the GIL)."
    )

    @property
    def accounted_s(self) -> float:
        """CPU per request the lab accounts for: the request's, the server's own, no request's, the
        lab's own reads'."""
        return (
            self.request_cpu_per_request_s
            + self.server_cpu_per_request_s
            + self.no_request_cpu_per_request_s
            + self.lab_reads_cpu_per_request_s
        )

    @property
    def lower_bound(self) -> bool:
        """Too little of the processes' CPU accounted for: the measured CPU per request is a floor."""
        return self.share < ACCOUNTED_SHARE
