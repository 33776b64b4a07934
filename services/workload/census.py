"""Process census of the server's own tree, with psutil (never by parsing `top`).

Finding the tree means reading the parent of every process on the machine (/proc/<pid>/stat; the
kernel's /proc/<pid>/task/<tid>/children is not built into these kernels). That is done here with
one open, read and close per process, which costs less than half of psutil's own walk.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import psutil

from workload.cores import CgroupCpu, cgroup_cpu_stat
from workload.lifetime import ROOT_PID_ENV
from workload.metrics_process import METRICS_SERVER_MODULE
from workload.server import ROOT_SERVES_ENV


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    name: str
    role: str  # master, reloader, worker, pool, helper or metrics
    threads: int
    rss_bytes: int
    cpu_seconds: float  # user + system since the process started


@dataclass(frozen=True)
class Census:
    root_pid: int
    process_count: int
    thread_count: int
    rss_bytes: int
    cpu_seconds: float
    serving_processes: int  # processes that answer requests: the workers, or the root itself
    processes: list[ProcessInfo]
    cgroup_cpu: CgroupCpu | None  # the server's cgroup CPU throttling; None where there is none

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _role(process: psutil.Process, root: psutil.Process, reload: bool, root_serves: bool) -> str:
    if process.pid == root.pid:
        return "reloader" if reload else "master"
    cmdline = process.cmdline()
    if process.ppid() == root.pid and cmdline[1:3] == ["-m", METRICS_SERVER_MODULE]:
        # Serves no requests, so never a worker; its CPU (the scrapes) stays in the tree's total.
        return "metrics"
    if "resource_tracker" in " ".join(cmdline):
        return "helper"  # multiprocessing's resource tracker, started with a spawn-context pool
    if process.ppid() == root.pid and not root_serves:
        return "worker"  # gunicorn workers, uvicorn --workers children, the reloader's server
    return "pool"


def root_process() -> psutil.Process:
    """The server's master: exported by the entrypoint; this process when run without it."""
    return psutil.Process(int(os.environ.get(ROOT_PID_ENV, os.getpid())))


def descendants(root_pid: int) -> list[int]:
    """Every process below `root_pid` (children before grandchildren), from one pass over /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 4096)
            finally:
                os.close(fd)
        except OSError:
            continue  # exited since the listing
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so from the last ")".
        ppid = int(stat[stat.rfind(b")") + 2 :].split(b" ", 2)[1])
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    parents = [root_pid]
    while parents:
        parents = [child for parent in parents for child in children.get(parent, [])]
        found.extend(parents)
    return found


def take_census(reload: bool) -> Census:
    """`reload`: the root is uvicorn's reloader, not a server of its own."""
    root = root_process()
    root_serves = os.environ.get(ROOT_SERVES_ENV, "1") == "1"
    processes = []
    for pid in [root.pid, *descendants(root.pid)]:
        try:
            process = root if pid == root.pid else psutil.Process(pid)
            with process.oneshot():
                cpu = process.cpu_times()
                processes.append(
                    ProcessInfo(
                        pid=process.pid,
                        ppid=process.ppid(),
                        name=process.name(),
                        role=_role(process, root, reload, root_serves),
                        threads=process.num_threads(),
                        rss_bytes=process.memory_info().rss,
                        cpu_seconds=cpu.user + cpu.system,
                    )
                )
        except psutil.NoSuchProcess:
            continue  # exited between listing and reading: not part of the tree any more
    return Census(
        root_pid=root.pid,
        process_count=len(processes),
        thread_count=sum(p.threads for p in processes),
        rss_bytes=sum(p.rss_bytes for p in processes),
        cpu_seconds=sum(p.cpu_seconds for p in processes),
        serving_processes=1 if root_serves else sum(1 for p in processes if p.role == "worker"),
        processes=processes,
        cgroup_cpu=cgroup_cpu_stat(),
    )
