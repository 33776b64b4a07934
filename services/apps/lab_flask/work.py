"""The work endpoints, the same blocking code on every worker class: the kernel, a wait, and mixed
work. Under gevent the waits yield to the worker's other greenlets; on gthread's threads they
release the GIL; the CPU work holds the worker's one core either way."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from apps.lab_flask.params import path_int, query_int, rule
from apps.lab_flask.state import state
from workload.contract import Endpoint, cpu_endpoint, io_endpoint, mixed_endpoint
from workload.io import MAX_IO_MILLISECONDS, blocking_wait
from workload.kernel import run_iterations
from workload.metrics import counted
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS, mixed_blocking
from workload.paths import MIXED, cpu_path, io_path
from workload.served_by import Execution

blueprint = Blueprint("work", __name__)


def endpoints(execution: Execution, slots: int) -> list[Endpoint]:
    """/info's description of these routes: all run the same way, `slots` requests at once."""
    return [
        cpu_endpoint("sync-cpubound", execution, slots),
        io_endpoint("io-bound", execution, slots),
        mixed_endpoint(execution, slots),
    ]


@blueprint.get(rule(cpu_path("sync-cpubound")))
def sync_cpubound(iterations: str) -> Response:
    return jsonify(counted(run_iterations(path_int(iterations, "iterations", 1, state().max_iterations))))


@blueprint.get(rule(io_path("io-bound")))
def io_bound(milliseconds: str) -> Response:
    return jsonify(blocking_wait(path_int(milliseconds, "milliseconds", 0, MAX_IO_MILLISECONDS)).as_dict())


@blueprint.get(MIXED)
def mixed() -> Response:
    cpu_ms = query_int("cpu_ms", 0, MAX_CPU_MILLISECONDS)
    io_ms = query_int("io_ms", 0, MAX_IO_MILLISECONDS)
    splits = query_int("splits", 1, MAX_SPLITS, default="1")
    return jsonify(mixed_blocking(cpu_ms, io_ms, splits).as_dict())
