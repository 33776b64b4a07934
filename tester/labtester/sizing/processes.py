"""A server process in a simulated run (events.py): its slots, its queue, the requests computing
in it, and how the pod's cores are shared among the processes and which one takes an arrival."""

from __future__ import annotations

from collections import deque

from labtester.sizing.configuration import Accept


class Process:
    """One server process: its requests computing (with their CPU left) and its own queue."""

    __slots__ = ("beside", "beside_virtual", "busy", "computing", "demand", "held_answers", "left",
                 "queue", "running", "speed", "stop_left", "stop_speed", "stopped", "to_collect",
                 "virtual")  # fmt: skip

    def __init__(self) -> None:
        self.busy = 0  # requests holding a slot
        # Preemptive: a heap by virtual finish; else in turn, each with its CPU (`left`: the first's left).
        self.computing: list[tuple[float, int]] = []
        self.virtual = 0.0  # preemptive: CPU each computing request received so far (all alike)
        self.left = 0.0
        self.queue: deque[int] = deque()  # requests that reached this process and wait for a slot
        self.beside: list[tuple[float, int]] = []  # threads beside an event loop: a heap, as `computing`
        self.beside_virtual = 0.0
        # The cores each of its requests computing gets (0: none computes), as share_cores shares them
        # out: attributes, not a list of pairs made afresh, as a compiled run keeps them unboxed.
        self.speed = 0.0
        self.running, self.demand = 0, 0.0
        # A full garbage collection stops the process (events.py) until its end event: the CPU it
        # has left, the core it gets, the requests whose wait ended meanwhile (a thread answers once
        # it has the GIL back), and how far its requests' allocations are toward the next one (1: due).
        self.stopped = False
        self.stop_left, self.stop_speed = 0.0, 0.0
        self.held_answers: list[int] = []
        self.to_collect = 0.0

    def add_allocations(self, collections: float, cpu_s: float) -> bool:
        """A request's share of the full collections (its allocations'): True where that makes one
        due, the process then stopped for its CPU (on one core; its requests get none meanwhile)."""
        self.to_collect += collections
        if self.to_collect < 1.0:
            return False
        self.to_collect -= 1.0
        self.stop_left += cpu_s
        self.stopped = True
        return True

    def collected(self) -> list[int]:
        """Its collection is over: the answers it held, to be sent now."""
        held, self.held_answers = self.held_answers, []
        self.stopped, self.stop_left = False, 0.0
        return held


def share_cores(
    processes: list[Process], cores: float, parallel: float, preemptive: bool, client: bool
) -> float:
    """The cores each request computing in a process gets, set as its `speed`: the process gets as
    many as it can use (one request uses at most one, a process at most `parallel`), all scaled
    down alike when they ask for more than `cores`, and shares them evenly among its requests; and
    the client's (one thread: at most one core, returned), where it has a job. A process stopped by
    a collection asks for the one core its collection runs on, and its requests get none."""
    asked = 1.0 if client else 0.0
    for process in processes:  # no calls: a third of a search's CPU was here
        if process.stopped:
            process.running, process.demand = 0, 1.0
            asked += 1.0
            continue
        # Its threads, or its loop's one request at a time, and the threads beside its loop.
        n = (len(process.computing) if preemptive else min(1, len(process.computing))) + len(process.beside)
        process.running = n
        process.demand = (n if n < parallel else parallel) if n else 0.0
        asked += process.demand
    scale = cores / asked if asked > cores else 1.0
    for process in processes:
        process.speed = process.demand * scale / process.running if process.running else 0.0
        process.stop_speed = scale if process.stopped else 0.0
    return scale if client else 0.0


def choose(processes: list[Process], per_process: float, accept: Accept, draw: float) -> int | None:
    """Which process takes an arrival: an idle worker of a shared queue (None: none is idle, it
    waits in the queue), or the worker its connection reached, chosen at random."""
    if accept == "shared":
        return next((p for p, process in enumerate(processes) if process.busy < per_process), None)
    return min(int(draw * len(processes)), len(processes) - 1)
