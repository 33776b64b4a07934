"""One simulated run's event loop (labtester.sizing.model says what it models): the processes
with their slots and queues, the waits, the cores shared among the processes computing, and the
clock moved from one event (an arrival, a CPU phase's end, a wait's end, a slot's close) to the next.

A request computes, waits, then answers, for which it needs its process back: threads get it
within their share of the core at once (their answer's CPU is counted before the wait), greenlets
and event loops only once every CPU phase ahead of it in the process ended (its `resume`: the
server's own CPU per request, writing the answer), so a path that never yields holds the other
requests' answers, not only their start (the Flask shop's /checkout, a 150 ms wait, was answered
in up to 6.1 s on gevent beside /report, where the model said 0.59 s).

On an event loop whose requests hand work to threads (`Configuration.threads_beside`), a request's
CPU is two phases: its part on the loop (one request's at a time, in turn), then its part in
threads (`beside`: shared with the loop and the process's other such threads, as threads share
it), then its wait and its answer on the loop.

A full garbage collection a request's allocations make due stops its process until its end event
(Process.add_allocations); a thread whose wait ended meanwhile answers once it is over.

Where the load client runs on the same cores (`client_s`, by request), it is one more thread among
them, an event loop: a request reaches the server once the client sent it (BEFORE_SEND of its CPU)
and is answered once the client read the answer (the rest), so the client's CPU is in the latency
and competes for the cores as the machine shares them, not a share taken off the server's (README,
"the light path's p99"; the flows' sync cycle, scenarios/flow/sync_cycle.py, has it so)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from typing import Final

from labtester.sizing.configuration import Configuration
from labtester.sizing.processes import Process, choose, share_cores

# Run.step's events beside process p's CPU phase ending (p) and its collection's (n + p, of n): an arrival,
# a wait's end, a slot's close after its answer, the client's job ending, and a phase in threads beside
# process p's loop ending (_BESIDE - p). Final: a compiled run reads them as constants, not as globals.
_ARRIVAL: Final = -1
_WAIT: Final = -2
_CLOSE: Final = -3
_CLIENT: Final = -4
_BESIDE: Final = -5
_NEVER: Final = math.inf
BEFORE_SEND: Final = 0.5  # of the client's CPU per request, what it spends to send it (the rest: to read it)


class Run:
    """One simulated run's state: its processes, the shared queue, the waits and the clock."""

    def __init__(
        self,
        config: Configuration,
        cores: float,
        parallel: float,
        times: list[float],
        client_s: Sequence[float] = (),
    ) -> None:
        if cores <= 0 or parallel <= 0:  # no core, no step would ever end a phase
            raise ValueError(f"a run needs cores: {cores} in the pod, {parallel} a process")
        self.config, self.cores, self.parallel, self.times = config, cores, parallel, times
        self.client_s = client_s  # by request (empty: no client on these cores)
        # The client's jobs in turn (to send a request, or read its answer: `reading`), the first's CPU left.
        self.client: deque[tuple[int, bool]] = deque()
        self.client_left = 0.0
        self.processes = [Process() for _ in range(config.processes)]
        self.per_process = math.inf if config.per_process is None else config.per_process
        self.shared: deque[int] = deque()
        self.waits: list[tuple[float, int, int]] = []  # (ends at, request, process)
        self.cpu: list[float] = []
        self.wait: list[float] = []
        self.resume: list[float] = []  # CPU after the wait, to answer
        self.waited = [False] * len(times)
        self.beside = [0.0] * len(times)  # CPU in threads beside the loop, after its CPU on it
        self.handed = [False] * len(times)
        self.close: list[float] = []  # by request: its slot held after its answer (empty: none)
        # By request: the full collections it makes due in its process, the CPU of one (empty: none).
        self.collections: list[float] = []
        self.collection_cpu: list[float] = []
        self.closes: list[tuple[float, int, int]] = []  # (ends at, request, process)
        self.draws: Sequence[float] = ()
        # Where a kind's CPU moves with its company: sets a request's phases as it starts, beside
        # so many others of its process (model.simulate).
        self.at_company: Callable[[int, int], None] | None = None
        self.latencies: list[float] = []
        self.answered: list[int] = []  # each request as it was answered, in the latencies' order
        self.now, self.arrived = 0.0, 0
        # The cores each computing process's requests get (its `speed`), and the client: they change only
        # as a CPU phase starts or ends, kept between the events that do neither (a fifth of the bench's).
        self.speeds_known, self.client_speed = False, 0.0

    def serve(self) -> None:
        """Every request, to its answer."""
        while len(self.latencies) < len(self.times):
            self.step()

    def step(self) -> None:
        """To the next event (an arrival, the client's job, a wait, a close, a phase's end); handle it."""
        preemptive = self.config.preemptive
        if not self.speeds_known:
            self.client_speed = share_cores(
                self.processes, self.cores, self.parallel, preemptive, bool(self.client)
            )
            self.speeds_known = True
        next_at, event = _NEVER, _ARRIVAL
        if self.arrived < len(self.times):
            next_at = self.times[self.arrived]
        if self.waits and self.waits[0][0] < next_at:
            next_at, event = self.waits[0][0], _WAIT
        if self.closes and self.closes[0][0] < next_at:
            next_at, event = self.closes[0][0], _CLOSE
        now, processes = self.now, self.processes
        if self.client:
            at = now + self.client_left / self.client_speed if self.client_left > 0 else now
            if at < next_at:
                next_at, event = at, _CLIENT
        for p, process in enumerate(processes):
            if process.stopped:  # a collection: nothing else of it moves
                if (at := now + max(0.0, process.stop_left) / process.stop_speed) < next_at:
                    next_at, event = at, len(processes) + p
                continue
            each = process.speed
            if each <= 0:
                continue
            if process.computing:
                left = process.computing[0][0] - process.virtual if preemptive else process.left
                at = now + left / each if left > 0 else now
                if at < next_at:
                    next_at, event = at, p
            if process.beside:
                left = process.beside[0][0] - process.beside_virtual
                at = now + left / each if left > 0 else now
                if at < next_at:
                    next_at, event = at, _BESIDE - p
        self.advance(next_at - self.now)
        self.now = next_at
        self.handle(event)

    def handle(self, event: int) -> None:
        """One event, now: an arrival, the client's job, a wait, a close, a phase's end (`step`)."""
        if event == _ARRIVAL:
            self.arrived += 1
            if self.client_s:
                self.to_client(self.arrived - 1, reading=False)
            else:
                self.arrive(self.arrived - 1)
        elif event == _CLIENT:
            self.client_done()
        elif event == _WAIT:
            _, request, p = heappop(self.waits)
            self.waited[request] = True
            if self.config.preemptive and self.processes[p].stopped:
                self.processes[p].held_answers.append(request)
            elif self.config.preemptive:
                self.finish(request, p)  # its answer's CPU was counted with the rest (model.py)
            else:
                self.compute(request, p, self.resume[request])
        elif event == _CLOSE:
            _, _, p = heappop(self.closes)
            self.release(p)
        elif event >= len(self.processes):
            self.collected(event - len(self.processes))
        elif event <= _BESIDE:
            p = _BESIDE - event
            _, request = heappop(self.processes[p].beside)
            self.speeds_known = False
            self.handed[request] = True
            self.computed_request(request, p)
        else:
            self.computed(event)

    def collected(self, p: int) -> None:
        """Process p's collection is over: the threads whose wait ended meanwhile answer."""
        self.speeds_known = False
        for request in self.processes[p].collected():
            self.finish(request, p)

    def advance(self, elapsed: float) -> None:
        """Each computing request's CPU, `elapsed` seconds on, at the cores each one gets."""
        for process in self.processes:
            if process.stopped:
                process.stop_left -= elapsed * process.stop_speed
                continue
            each = process.speed
            if each <= 0:
                continue
            if process.computing:
                if self.config.preemptive:
                    process.virtual += elapsed * each
                else:
                    process.left -= elapsed * each
            if process.beside:
                process.beside_virtual += elapsed * each
        if self.client:
            self.client_left -= elapsed * self.client_speed

    def to_client(self, request: int, reading: bool) -> None:  # after the jobs it has
        if not self.client:
            self.client_left = self.client_part(request, reading)
            self.speeds_known = False
        self.client.append((request, reading))

    def client_part(self, request: int, reading: bool) -> float:
        """The client's CPU to send a request (BEFORE_SEND of its CPU for it), or to read its answer."""
        return self.client_s[request] * ((1 - BEFORE_SEND) if reading else BEFORE_SEND)

    def client_done(self) -> None:
        """The client sent a request (it reaches the server) or read its answer (answered)."""
        request, reading = self.client.popleft()
        if self.client:
            self.client_left = self.client_part(*self.client[0])
        else:
            self.speeds_known = False
        if reading:
            self.answer(request)
        else:
            self.arrive(request)

    def arrive(self, request: int) -> None:
        chosen = choose(self.processes, self.per_process, self.config.accept, self.draws[request])
        if chosen is None:
            self.shared.append(request)
        elif self.processes[chosen].busy < self.per_process:
            self.start(request, chosen)
        else:
            self.processes[chosen].queue.append(request)

    def start(self, request: int, p: int) -> None:
        process, collections = self.processes[p], self.collections
        process.busy += 1
        if collections and process.add_allocations(collections[request], self.collection_cpu[request]):
            self.speeds_known = False
        if self.at_company is not None:
            self.at_company(request, process.busy - 1)
        if self.cpu[request] > 0:
            self.compute(request, p, self.cpu[request])
        elif self.beside[request] > 0:
            self.computed_request(request, p)
        else:
            heappush(self.waits, (self.now + self.wait[request], request, p))

    def compute(self, request: int, p: int, cpu_s: float) -> None:
        """A CPU phase: shared with the process's other threads, or after every phase ahead of it."""
        process = self.processes[p]
        self.speeds_known = False
        if self.config.preemptive:
            heappush(process.computing, (process.virtual + cpu_s, request))
        else:
            process.computing.append((cpu_s, request))
            if len(process.computing) == 1:
                process.left = cpu_s

    def computed(self, p: int) -> None:
        """A request's CPU phase on its process's thread (or its loop) is done."""
        process = self.processes[p]
        self.speeds_known = False
        if self.config.preemptive:
            _, request = heappop(process.computing)
        else:
            _, request = process.computing.pop(0)
            if process.computing:
                process.left = process.computing[0][0]
        self.computed_request(request, p)

    def computed_request(self, request: int, p: int) -> None:
        """Its next phase: its CPU in threads beside the loop, its wait (after its work in threads,
        if none, its answer still needs the loop back: the waits hand it over), or its end."""
        process = self.processes[p]
        if self.beside[request] > 0 and not self.handed[request]:
            heappush(process.beside, (process.beside_virtual + self.beside[request], request))
            self.speeds_known = False
        elif (self.wait[request] > 0 or self.handed[request]) and not self.waited[request]:
            heappush(self.waits, (self.now + self.wait[request], request, p))
        else:
            self.finish(request, p)

    def finish(self, request: int, p: int) -> None:
        """Its answer sent: the client reads it (its latency ends then); its slot is free now, or
        once the client closed."""
        if self.client_s:
            self.to_client(request, reading=True)
        else:
            self.answer(request)
        if self.close and self.close[request] > 0:
            heappush(self.closes, (self.now + self.close[request], request, p))
        else:
            self.release(p)

    def answer(self, request: int) -> None:
        self.latencies.append(self.now - self.times[request])
        self.answered.append(request)

    def release(self, p: int) -> None:
        process = self.processes[p]
        process.busy -= 1
        source = self.shared if self.config.accept == "shared" else process.queue
        if source:
            self.start(source.popleft(), p)
