"""The HTTP contract every target honours: endpoint descriptions and /info.

/info lists each workload endpoint with how the server executes it, so the tester can predict
its concurrency without knowing which framework it talks to.
"""

from __future__ import annotations

import dataclasses
import platform
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Literal

from measure.waits import waits_yield
from workload.cores import EffectiveCores
from workload.fanout import MAX_FAN_OUT
from workload.green import monkey_patch_report
from workload.io import MAX_IO_MILLISECONDS
from workload.kernel import KERNEL_NAME, LOOPS_PER_ITERATION, MAX_CALIBRATE_SAMPLES
from workload.mixed import MAX_CPU_MILLISECONDS, MAX_SPLITS
from workload.paths import CONTROL, FAN_OUT, MIXED, cpu_path, io_path
from workload.served_by import Execution, ServedBy, served_by
from workload.server import written_paths
from workload.settings import TargetSettings

# app: the team's own code (apps.team), its CPU and waits measured per request, not declared.
Work = Literal["cpu", "io", "mixed", "app"]


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
    """What a target resolved from its settings and the server serving it: /info's description."""

    framework: str  # distribution names, so their versions come from the installed packages
    server: str
    worker_class: str  # "uvicorn", gunicorn's worker class, granian's interface
    workers: int
    threads: int  # request threads per worker: gthread's, granian's WSGI blocking threads; else 1
    cores: EffectiveCores
    max_iterations: int
    admits: int | None = None  # connections one worker admits at once; None: no limit
    server_settings: dict[str, object] = field(default_factory=dict)


# Every server exports how it runs the app (workload.served_by); an app called in-process, with
# no server in front, is described by its interface's default server, as it is first set.
ASGI_DEFAULT = ServedBy(server="uvicorn", worker_class="uvicorn")
WSGI_DEFAULT = ServedBy(server="gunicorn", worker_class="sync", execution="workers")


def _server(
    settings: TargetSettings, framework: str, served: ServedBy, default_multiplier: int | None
) -> Server:
    return Server(
        framework=framework,
        server=served.server,
        worker_class=served.worker_class,
        workers=settings.resolved_workers(default_multiplier),
        threads=served.threads,
        cores=settings.cores(),
        max_iterations=settings.resolved_max_iterations(),
        admits=served.admits,
        server_settings=served.settings,
    )


def asgi_server(settings: TargetSettings, framework: str) -> Server:
    """The server of an ASGI app: as its entrypoint says, else uvicorn (one worker by default)."""
    return _server(settings, framework, served_by(ASGI_DEFAULT), default_multiplier=None)


def wsgi_server(settings: TargetSettings, framework: str) -> Server:
    """The server of a WSGI app: as its entrypoint says, else gunicorn (1 x cores by default)."""
    return _server(settings, framework, served_by(WSGI_DEFAULT), default_multiplier=1)


def wsgi_execution(workers: int) -> tuple[Execution, int]:
    """How the server runs every request of a WSGI app, and how many at once (/info's execution,
    slots; `admitted` caps them by what the workers admit)."""
    served = served_by(WSGI_DEFAULT)
    assert served.execution is not None, "a server of WSGI apps says how its workers run them"
    return served.execution, workers * served.per_worker


def requests_per_worker() -> int:
    """Requests one worker process of a WSGI app holds at once: its greenlets, its threads, or one."""
    return served_by(WSGI_DEFAULT).per_worker


def admitted(endpoints: list[Endpoint], server: Server) -> list[Endpoint]:
    """The endpoints with their slots capped by the connections the workers admit at once."""
    if server.admits is None:
        return endpoints
    cap = server.workers * server.admits
    return [dataclasses.replace(e, slots=cap if e.slots is None else min(e.slots, cap)) for e in endpoints]


def monkey_patch() -> dict[str, object] | None:
    """What gevent patched, on gevent workers (patched before they loaded the app); None elsewhere."""
    if not waits_yield():
        return None
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
        # What the serving server says of itself (workload.served_by): the connections one worker
        # admits at once (null: no limit of its own), its settings behind the slots above.
        "admits_per_worker": server.admits,
        "server_settings": server.server_settings,
    }
    if monkey_patch is not None:
        info["monkey_patch"] = monkey_patch
    return info
