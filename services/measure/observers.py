"""Where the middleware reports each request it measured: to nobody until a sink is installed.

The metrics (workload.metrics) install Prometheus's series here when a serving process imports
them, after its entrypoint set Prometheus's multiprocess directory; the measurement itself
imports no Prometheus, so it runs, and is tested, without that set-up. A request's CPU charged to
the process's total goes the same way (measure.requestcpu's `charged_sink`).
"""

from __future__ import annotations

from typing import Protocol


class RequestSink(Protocol):
    def started(self) -> None:
        """A request is now in flight."""

    def ended(self) -> None:
        """A request in flight has ended (its body sent, or the client gone)."""

    def answered(self, method: str, route: str, status: int, duration_s: float, cpu_s: float) -> None:
        """A request was answered: its method, route label, status, time and measured CPU."""


class _Nobody:
    def started(self) -> None:
        pass

    def ended(self) -> None:
        pass

    def answered(self, method: str, route: str, status: int, duration_s: float, cpu_s: float) -> None:
        pass


_sink: RequestSink = _Nobody()


def install_request_sink(sink: RequestSink) -> None:
    global _sink
    _sink = sink


def request_started() -> None:
    _sink.started()


def request_ended() -> None:
    _sink.ended()


def request_answered(method: str, route: str, status: int, duration_s: float, cpu_s: float) -> None:
    _sink.answered(method, route, status, duration_s, cpu_s)
