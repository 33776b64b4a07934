"""A kind of request in the mix and what it costs where it runs, as measured: what the sizing's
model (model.py) serves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from labtester.sizing.configuration import Configuration
from labtester.sizing.overlap import Curve, at
from labtester.sizing.quantiles import quantile

FEWEST = 5  # fewer measured requests than this are no spread: the typical figure stands alone


class MixItem(Protocol):
    """One kind of request in the mix (a path today; a traffic file's request later)."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...


@dataclass(frozen=True)
class RequestKind:
    """One kind of request and what it costs where it runs, as measured. With measured spreads
    (`cpu_spread_s`, `wait_spread_s`: evenly spaced quantiles of what requests used), each
    simulated request draws its CPU and its wait from them, and the means stand for the typical
    figures; without, every request costs `cpu_s` and waits `wait_s`."""

    name: str
    weight: float  # its share of the mix (any positive scale)
    cpu_s: float  # the app's CPU per request, the mean alone (a rate follows the mean demand)
    wait_s: float  # what it waits (needs no core)
    overhead_s: float = 0.0  # the server's and framework's own CPU per request
    cores_per_process: float = 1.0  # cores one process's CPU can use (> 1: work that releases the GIL)
    cpu_spread_s: tuple[float, ...] = ()  # the app's CPU per request, quantiles (under load)
    wait_spread_s: tuple[float, ...] = ()  # its wait, quantiles (alone, net of the run queue)
    # Of the app's CPU, the share that ran off the request's own thread (handed to threads or
    # other processes, Server-Timing's `lab-elsewhere`): beside an event loop, not on it.
    elsewhere_share: float = 0.0
    # The app's mean CPU per request by the company it kept in its process (overlap.py): each
    # request draws from the spread scaled to the curve at the company it meets.
    cpu_by_company: Curve = ()
    close_s: float = 0.0  # after its answer, its slot held off every core until the client closed
    # The local load client's CPU per request of this kind, on the same cores (0: it runs elsewhere):
    # a thread among the server's in the simulation (events.py). Per family, as its flows measured
    # it: a sync worker's closed connections cost the client 0.27-0.40 ms a request on the Flask
    # shop's light path, gthread's and granian's kept ones 0.065-0.076 (2026-11-30, two labs).
    client_s: float = 0.0
    # The full garbage collections its requests set off in their process, per request, and the CPU
    # of one: each stops the process, every thread of it (events.py); the spread above holds none
    # (proposal/fullgc.py). As the family's flows measured.
    full_collections_per_request: float = 0.0
    full_collection_cpu_s: float = 0.0

    @property
    def mean_cpu_s(self) -> float:
        return sum(self.cpu_spread_s) / len(self.cpu_spread_s) if self.cpu_spread_s else self.cpu_s

    @property
    def mean_wait_s(self) -> float:
        return sum(self.wait_spread_s) / len(self.wait_spread_s) if self.wait_spread_s else self.wait_s

    @property
    def collecting_s(self) -> float:
        """The CPU of the full collections a request sets off, on average."""
        return self.full_collections_per_request * self.full_collection_cpu_s

    @property
    def demand_s(self) -> float:
        """The CPU a request costs its process, on average (its share of collections with it)."""
        return self.mean_cpu_s + self.overhead_s + self.collecting_s

    @property
    def least_demand_s(self) -> float:
        """The least CPU a request costs its process at any company measured (a ceiling's)."""
        least = min((cpu for _, cpu in self.cpu_by_company), default=self.mean_cpu_s)
        return min(least, self.mean_cpu_s) + self.overhead_s + self.collecting_s

    @property
    def alone_s(self) -> float:
        return self.demand_s + self.mean_wait_s

    @property
    def least_alone_s(self) -> float:
        """The least time a request holds its slot at any company measured (a ceiling's)."""
        return self.least_demand_s + self.mean_wait_s

    def cpu_scale(self, company: int) -> float:
        """The CPU of a request beside `company` others of its process, over the spread's mean."""
        if not self.cpu_by_company or self.mean_cpu_s <= 0:
            return 1.0
        return at(self.cpu_by_company, company) / self.mean_cpu_s

    def phases(
        self, cpu_draw: float, wait_draw: float, config: Configuration, scale: float = 1.0
    ) -> tuple[float, float, float, float]:
        """One request's phases in `config`, from draws in [0, 1): its CPU on its process's thread
        (or loop), its CPU in threads beside an event loop, its wait, and its CPU after them (the
        answer's). Threads answer within their share of the core: all their CPU is one phase. On a
        loop or greenlets the server's own CPU is the answer's, after the wait and the work in
        threads (with the app's, where there is neither); the work in threads is a phase of its own
        only beside an event loop (a greenlet's pool runs on its hub, in its turn). `scale`: of
        the app's CPU, at the company it meets (`cpu_scale`)."""
        cpu = scale * (quantile(self.cpu_spread_s, cpu_draw) if self.cpu_spread_s else self.cpu_s)
        wait = quantile(self.wait_spread_s, wait_draw) if self.wait_spread_s else self.wait_s
        if config.preemptive:
            return cpu + self.overhead_s, 0.0, wait, 0.0
        elsewhere = cpu * self.elsewhere_share if config.threads_beside else 0.0
        if wait > 0 or elsewhere > 0:
            return cpu - elsewhere, elsewhere, wait, self.overhead_s
        return cpu + self.overhead_s, 0.0, 0.0, 0.0
