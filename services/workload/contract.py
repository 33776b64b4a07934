"""The HTTP contract every target honours: endpoint descriptions, /info, the error shape.

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
from workload.kernel import KERNEL_NAME, LOOPS_PER_ITERATION
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS
from workload.server import written_paths
from workload.settings import MAX_CALIBRATE_SAMPLES, MAX_IO_MILLISECONDS, TargetSettings

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


def cpu_path(name: str) -> str:
    return f"/test/{name}/{{iterations}}"


def io_path(name: str) -> str:
    return f"/test/{name}/{{milliseconds}}"


MIXED_PATH = "/test/mixed"  # query: cpu_ms, io_ms, splits


def build_info(
    settings: TargetSettings,
    *,
    framework: str,
    server: str,
    worker_class: str,
    workers: int,
    threads: int,
    cores: EffectiveCores,
    max_iterations: int,
    endpoints: list[Endpoint],
    monkey_patch: dict[str, object] | None = None,
) -> dict[str, object]:
    """/info from the target's settings and what it resolved from them (workers, cores, cap).

    `framework` and `server` are distribution names, so their versions come from the installed
    packages. `worker_class`: "uvicorn", or gunicorn's worker class; `threads`: request threads
    per worker (gthread's; 1 for the others). `monkey_patch`: gevent workers only, what gevent
    patched (workload.green).
    """
    info: dict[str, object] = {
        "name": settings.name or framework,
        "framework": framework,
        "server": server,
        "worker_class": worker_class,
        "workers": workers,
        "threads": threads,
        "reload": settings.reload,
        "effective_cores": cores.cores,
        "cores_source": cores.source,
        "cpu_quota": cores.quota_cpus,
        "kernel": {
            "name": KERNEL_NAME,
            "loops_per_iteration": LOOPS_PER_ITERATION,
            "max_iterations": max_iterations,
            "work_cap_seconds": settings.work_cap_seconds,
        },
        "limits": {
            "max_io_milliseconds": MAX_IO_MILLISECONDS,
            "max_cpu_milliseconds": MAX_CPU_MILLISECONDS,
            "max_splits": MAX_SPLITS,
            "max_samples": MAX_CALIBRATE_SAMPLES,
            "max_fan_out": MAX_FAN_OUT,
            "max_in_flight": settings.max_in_flight,
        },
        "versions": {
            "python": platform.python_version(),
            framework: version(framework),
            server: version(server),
        },
        "endpoints": {endpoint.name: endpoint.as_dict() for endpoint in endpoints},
        # Where the tester finds the rest (it builds no URL by hand); metrics_port: /metrics served
        # by a thread of the root process, which the request path cannot hold.
        # Every directory the server's tree writes in: tmp_dir, the metrics folder, /dev/shm.
        "writes": written_paths(settings),
        "control": {
            "health": "/healthz",
            "info": "/info",
            "calibrate": "/test/calibrate",
            "census": "/test/resmon",
            "metrics": "/metrics",
            "metrics_port": settings.metrics_port or None,
        },
    }
    if monkey_patch is not None:
        info["monkey_patch"] = monkey_patch
    return info
