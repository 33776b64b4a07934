"""Why: causes drawn only from what the target's /info says and what the machine measured.

An explanation never names a mechanism the configuration cannot have: accept fairness needs
several worker processes; the GIL needs threads; an event loop needs async code.
"""

from __future__ import annotations

import math

from labtester.findings.wording import pct, plural
from labtester.info import EndpointInfo, TargetInfo
from labtester.model import ONE_CORE_PER_PROCESS

# Above this, a finished response waiting for delivery is worth naming.
DELIVERY_SHARE = 0.1
# Server CPU beyond the requests' measured work by more than this share is overhead worth naming.
OVERHEAD_SHARE = 0.2


def execution(endpoint: EndpointInfo, info: TargetInfo, cores: float | None, cpu: bool | None = None) -> str:
    """How the target runs this endpoint, from its config: the reason for its shape. `cpu`: whether
    its work is mostly CPU, where it was measured (a team's path); else from the work it declares."""
    workers, threads = info.workers, info.threads
    on_cores = f" on {plural(cores, 'core')}" if cores else ""
    cpu = endpoint.work != "io" if cpu is None else cpu
    match endpoint.execution:
        case "event_loop":
            loops = "the event loop" if workers == 1 else f"each of {workers} event loops"
            return f"the work blocks {loops}, which serves nothing else meanwhile"
        case "workers":
            return f"{plural(workers, 'sync worker')}, one request each{on_cores}"
        case "process_pool":
            if workers == 1:
                return f"a pool of {plural(endpoint.slots or 0, 'process', 'processes')}{on_cores}"
            each = plural((endpoint.slots or 0) // workers, "process", "processes")
            return f"each of {workers} workers has a pool of {each}{on_cores}, for the requests it took"
        case "thread_pool":
            per = "one core" if workers == 1 else "one core per worker"
            return f"threads under the GIL share {per}" if cpu else "the waits overlap in the thread pool"
        case "greenlets":
            if cpu:
                return "a computing greenlet never yields: requests take turns on each worker's one thread"
            return f"greenlets overlap their waits ({plural(endpoint.slots or 0, 'connection')})"
        case "threads":
            shape = f"{plural(workers, 'worker')} x {plural(threads, 'thread')}"
            if cpu:
                return f"{shape}; threads under the GIL share one core per worker"
            return f"{shape}: up to {endpoint.slots} waits at once"
        case _:  # async
            return "the waits overlap on the event loop" if not cpu else "CPU parts take turns on the loop"


def interference(taker: str, share_lost: float) -> str:
    return f"{taker} took CPU it was due: it got {pct(1 - share_lost)} of the CPU the model allows"


def even_share(n: int, workers: int) -> int:
    """The most requests any one of `workers` processes takes when n are spread evenly."""
    return math.ceil(n / workers)


def departure(
    endpoint: EndpointInfo,
    info: TargetInfo,
    *,
    n: int,
    ratio: float,
    most_on_one_process: int | None,
    server_cpu_s: float | None,
    work_cpu_s: float | None,
    delivery_lag_s: float | None,
    makespan_s: float,
) -> str:
    """The model's assumption that failed, among those this target's configuration can break."""
    spreads_over_processes = endpoint.execution in {*ONE_CORE_PER_PROCESS, "workers"} and info.workers > 1
    even = even_share(n, info.workers)
    if (
        ratio > 1
        and spreads_over_processes
        and most_on_one_process is not None
        and most_on_one_process > even
    ):
        return (
            f"an even spread over {plural(info.workers, 'worker')}: one process took {most_on_one_process} "
            f"of the {n} requests where an even spread gives each at most {even} "
            "(the OS handed several to the same worker: accept fairness)"
        )
    if server_cpu_s and work_cpu_s and server_cpu_s > (1 + OVERHEAD_SHARE) * work_cpu_s:
        return (
            f"work as measured: the server's processes used {server_cpu_s:.2f} s of CPU for "
            f"{work_cpu_s:.2f} s of measured work (overhead outside the handlers)"
        )
    if delivery_lag_s and delivery_lag_s > DELIVERY_SHARE * makespan_s:
        return (
            f"prompt delivery: a finished response waited {delivery_lag_s * 1000:.0f} ms to reach the client"
        )
    if ratio < 1:
        return "the cores: the requests ran faster than sharing the declared cores allows"
    return (
        "processor sharing: the cores were free, yet the requests progressed slower than sharing them allows"
    )
