"""The HTTP contract every target honours: endpoint descriptions and /info.

/info lists each workload endpoint with how the server executes it, so the tester can predict
its concurrency without knowing which framework it talks to.
"""

from __future__ import annotations

import platform
from contextlib import suppress
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
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
# app: the team's own code (app_target), its CPU and waits measured per request, not declared.
Work = Literal["cpu", "io", "mixed", "app"]
# How each gunicorn worker class runs requests: what /info calls it.
GUNICORN_EXECUTION: dict[str, Execution] = {"sync": "workers", "gevent": "greenlets", "gthread": "threads"}


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


def uvicorn_server(settings: TargetSettings, framework: str) -> Server:
    """uvicorn's workers: one by default (its production default), each one event loop."""
    return Server(
        framework=framework,
        server="uvicorn",
        worker_class="uvicorn",
        workers=settings.resolved_workers(default_multiplier=None),
        threads=1,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
    )


def gunicorn_server(settings: TargetSettings, framework: str) -> Server:
    """gunicorn's workers: 1 x cores by default, of LAB_WORKER_CLASS."""
    return Server(
        framework=framework,
        server="gunicorn",
        worker_class=settings.worker_class,
        workers=settings.resolved_workers(default_multiplier=1),
        threads=settings.threads if settings.worker_class == "gthread" else 1,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
    )


def gunicorn_execution(settings: TargetSettings, workers: int) -> tuple[Execution, int]:
    """How a gunicorn server runs every request, and how many at once (/info's execution, slots)."""
    return GUNICORN_EXECUTION[settings.worker_class], workers * requests_per_worker(settings)


def requests_per_worker(settings: TargetSettings) -> int:
    """Requests one gunicorn worker process holds at once: its greenlets, its threads, or one."""
    return {"gevent": settings.worker_connections, "gthread": settings.threads}.get(settings.worker_class, 1)


def monkey_patch(settings: TargetSettings) -> dict[str, object] | None:
    """What gevent patched, on gevent workers; None on the others."""
    if settings.worker_class != "gevent":
        return None
    # Imported here: only a gevent worker (patched before it loaded the app) may import gevent.
    from workload.green import monkey_patch_report

    return monkey_patch_report()


def _limits(settings: TargetSettings) -> dict[str, object]:
    return {
        "max_io_milliseconds": MAX_IO_MILLISECONDS,
        "max_cpu_milliseconds": MAX_CPU_MILLISECONDS,
        "max_splits": MAX_SPLITS,
        "max_samples": MAX_CALIBRATE_SAMPLES,
        "max_fan_out": MAX_FAN_OUT,
        "max_in_flight": settings.max_in_flight,
    }


def _versions(server: Server) -> dict[str, str]:
    """Python's, the server's, and the framework's where it is a distribution (a bare ASGI or
    WSGI callable's framework is "asgi" or "wsgi")."""
    versions = {"python": platform.python_version(), server.server: version(server.server)}
    with suppress(PackageNotFoundError):
        versions[server.framework] = version(server.framework)
    return versions


def build_info(
    settings: TargetSettings,
    server: Server,
    endpoints: list[Endpoint],
    monkey_patch: dict[str, object] | None = None,
) -> dict[str, object]:
    """/info from the target's settings and what it resolved from them.

    `monkey_patch`: gevent workers only, what gevent patched (workload.green).
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
        "versions": _versions(server),
        "endpoints": {endpoint.name: endpoint.as_dict() for endpoint in endpoints},
        # Every directory the server's tree writes in: tmp_dir, the metrics folder, /dev/shm.
        "writes": written_paths(settings),
        # Where the tester finds the rest (it builds no URL by hand); metrics_port: /metrics served
        # by the metrics process, a child of the root that serves nothing else.
        "control": {**CONTROL, "metrics_port": settings.metrics_port or None},
    }
    if monkey_patch is not None:
        info["monkey_patch"] = monkey_patch
    return info
