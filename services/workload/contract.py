"""The HTTP contract every target honours: endpoint descriptions and /info.

/info lists each workload endpoint with how the server executes it, so the tester can predict
its concurrency without knowing which framework it talks to.
"""

from __future__ import annotations

import platform
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import Literal

from workload.cores import EffectiveCores
from workload.fanout import MAX_FAN_OUT
from workload.io import MAX_IO_MILLISECONDS
from workload.kernel import KERNEL_NAME, LOOPS_PER_ITERATION, MAX_CALIBRATE_SAMPLES
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS
from workload.paths import CONTROL, FAN_OUT, MIXED, cpu_path, io_path
from workload.server import written_paths
from workload.settings import TargetSettings

# event_loop: blocks the server's event loop; workers: one request per sync worker process;
# process_pool / thread_pool: offloaded to a pool; async: awaits without holding anything;
# greenlets: gevent workers, each taking up to worker_connections requests whose waits overlap
# while their CPU parts take turns on the worker's one thread; threads: gthread workers, each
# running `threads` requests on threads whose waits overlap while their CPU parts share the
# worker's one core (the GIL).
Execution = Literal["event_loop", "workers", "process_pool", "thread_pool", "async", "greenlets", "threads"]
Work = Literal["cpu", "io", "mixed"]


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: str
    work: Work
    execution: Execution
    slots: int | None  # requests that can run at once; None: no limit

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def cpu_endpoint(name: str, execution: Execution, slots: int | None) -> Endpoint:
    return Endpoint(name, cpu_path(name), "cpu", execution, slots)


def io_endpoint(name: str, execution: Execution, slots: int | None) -> Endpoint:
    return Endpoint(name, io_path(name), "io", execution, slots)


def mixed_endpoint(execution: Execution, slots: int | None) -> Endpoint:
    return Endpoint("mixed", MIXED, "mixed", execution, slots)


def downstream_endpoints(execution: Execution, slots: int | None) -> list[Endpoint]:
    """The downstream call and the fan-out: listed only where LAB_DOWNSTREAM_URL is set."""
    return [io_endpoint("downstream", execution, slots), Endpoint("fan-out", FAN_OUT, "io", execution, slots)]


@dataclass(frozen=True)
class Server:
    """What a target resolved from its settings: /info's description of the server."""

    framework: str  # distribution names, so their versions come from the installed packages
    server: str
    worker_class: str  # "uvicorn", or gunicorn's worker class
    workers: int
    threads: int  # request threads per worker: gthread's; 1 for the others
    cores: EffectiveCores
    max_iterations: int


def _limits(settings: TargetSettings) -> dict[str, object]:
    return {
        "max_io_milliseconds": MAX_IO_MILLISECONDS,
        "max_cpu_milliseconds": MAX_CPU_MILLISECONDS,
        "max_splits": MAX_SPLITS,
        "max_samples": MAX_CALIBRATE_SAMPLES,
        "max_fan_out": MAX_FAN_OUT,
        "max_in_flight": settings.max_in_flight,
    }


def build_info(
    settings: TargetSettings,
    server: Server,
    endpoints: list[Endpoint],
    extra: dict[str, object] | None = None,
) -> dict[str, object]:
    """/info from the target's settings and what it resolved from them.

    `extra`: what only some servers have to say, e.g. `monkey_patch` on gevent workers (what
    gevent patched, workload.green), the serving server's own settings (workload.serving).
    """
    info: dict[str, object] = {
        "name": settings.name or server.framework,
        "framework": server.framework,
        "server": server.server,
        "worker_class": server.worker_class,
        "workers": server.workers,
        "threads": server.threads,
        "reload": settings.reload,
        "effective_cores": server.cores.cores,
        "cores_source": server.cores.source,
        "cpu_quota": server.cores.quota_cpus,
        "kernel": {
            "name": KERNEL_NAME,
            "loops_per_iteration": LOOPS_PER_ITERATION,
            "max_iterations": server.max_iterations,
            "work_cap_seconds": settings.work_cap_seconds,
        },
        "limits": _limits(settings),
        "versions": {
            "python": platform.python_version(),
            server.framework: version(server.framework),
            server.server: version(server.server),
        },
        "endpoints": {endpoint.name: endpoint.as_dict() for endpoint in endpoints},
        # Every directory the server's tree writes in: tmp_dir, the metrics folder, /dev/shm.
        "writes": written_paths(settings),
        # Where the tester finds the rest (it builds no URL by hand); metrics_port: /metrics served
        # by the metrics process, a child of the root that serves nothing else.
        "control": {**CONTROL, "metrics_port": settings.metrics_port or None},
    }
    return {**info, **(extra or {})}
