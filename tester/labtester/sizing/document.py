"""The sizing's part of results.json: the proposal for a pod and objective, each proof run's prediction
beside its measurement, where a prediction cannot hold (caveats). A configuration proved is a target of
the run: its plan and runs are its raw records, `SizedSummary` its summary, `SizingConclusion` all."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from labtester.findings.wording import seconds, seconds_between
from labtester.sizing.arrivals import SEED
from labtester.sizing.caveat import Caveat
from labtester.sizing.floor import Floor
from labtester.sizing.tail import TailSplit

SHARED_CPU_NOTABLE = 1.2  # a kind's CPU beside another request of its process over alone: said from here
PROOF_S = 20.0  # each proof run's length
# A proof run's first fifth: served and measured, not judged; what it measures predicts its window.
WARMUP_SHARE = 0.2

MOST_PREDICTED = 8000  # simulated requests for a level's prediction (as many as the proof sends, to this)
# Minutes of traffic build queues a 20-s proof from idle does not (Flask shop: p99 0.39 s, 0.50-0.77 s).
SUSTAINED_S = 600.0
MOST_SUSTAINED = 40000  # simulated requests a run at most (0.35 s of CPU here): p99 at the knee to ~10 %

# The proposal, another family's best, the lab's pick; where nothing in the pod serves RATE=, the
# smallest configuration on the pod it would need (predicted, not proved). Where the proofs' requests
# used other CPU than the plan drew, the knobs searched again on it, its proposal proved (`resized`).
Role = Literal["proposed", "family", "fixed", "needed", "resized"]
DEPARTS = 0.15  # predicted and measured further apart than this: said, and by how much


def warmup_of(duration_s: float) -> float:
    """The first seconds of a proof run of `duration_s`: its warm-up."""
    return WARMUP_SHARE * duration_s


def sustained_length(rate_per_s: float) -> float | None:
    """How long sustained traffic at this rate is simulated: SUSTAINED_S, or MOST_SUSTAINED
    requests where those take less; None under a minute (that is no sustained traffic)."""
    length = min(SUSTAINED_S, MOST_SUSTAINED / rate_per_s) if rate_per_s > 0 else 0.0
    return length if length >= 60 else None


class PodSize(BaseModel):
    cores: float
    memory_bytes: int
    source: str  # "CORES= and MEMORY=", "this machine's cgroup", ...


class Objective(BaseModel):
    p99_s: float
    why: str  # "4 x the mix's mean time alone (82 ms)", "P99="
    rate_per_s: float | None = None  # RATE=: the smallest configuration that serves it


class KindCost(BaseModel):
    """One kind of request in the mix, and what the model took it to cost."""

    name: str
    weight: float
    cpu_s: float  # the app's CPU per request, the mean alone (a rate follows the mean demand)
    wait_s: float
    overhead_s: float  # the server's own CPU per request (its family's, measured where it ran)
    cores_per_process: float
    # What the simulation draws each request's CPU and wait from: evenly spaced quantiles of the
    # measured (CPU under load in the family's configurations, wait alone net of the run queue).
    cpu_spread_s: list[float] = []
    wait_spread_s: list[float] = []
    # Of its CPU, the share its requests ran off their own thread (Server-Timing `lab-elsewhere`).
    elsewhere_share: float = 0.0
    cpu_by_company: list[list[float]] = []  # [company, mean CPU s] by company (sizing/overlap.py)
    close_s: float = 0.0  # after its answer, its slot held until the client closed (a sync worker's)
    client_s: float = 0.0  # the local load client's CPU per request of it, on the same cores
    full_collections_per_request: float = 0.0  # full garbage collections, each stops its process
    full_collection_cpu_s: float = 0.0  # the CPU of one (proposal/fullgc.py)

    @property
    def mean_cpu_s(self) -> float:
        """The app's CPU per request the simulation drew on average: its spread's mean, else cpu_s."""
        return sum(self.cpu_spread_s) / len(self.cpu_spread_s) if self.cpu_spread_s else self.cpu_s


class Level(BaseModel):
    """One open-loop run of the mix at an offered rate: predicted beside measured."""

    offered_per_s: float
    seed: int = SEED  # its sends: proof_arrivals' and proof_kinds' of it (sizing/proof.py's typical)
    predicted_per_s: float
    predicted_p99_s: float
    # The least and the most p99 of its draws (model.BAND_DRAWS runs of the sends): one run's may be anywhere.
    p99_band_s: list[float] = []
    # Over minutes of traffic at this rate (`sustained_s`: SUSTAINED_S, fewer where MOST_SUSTAINED requests
    # take less; the proposal's and its re-sizing's levels): the p99 a team at it sees, no 20-s proof's.
    sustained_p99_s: float | None = None
    sustained_s: float | None = None
    # The same once the level was proved, on the CPU its run's requests used (`sustained_cpu_ratio`:
    # over the plan's) and the server's own CPU per request it measured where read, on the pod's cores.
    sustained_used_p99_s: float | None = None
    sustained_cpu_ratio: float | None = None
    measured_per_s: float | None = None  # None: not run (the configuration did not start)
    measured_p99_s: float | None = None  # from each request's scheduled send
    requests: int = 0
    failed: int = 0
    # What the machine (other processes, the load client) left the server in the run, the model's there and
    # the full collections its window counted (collected.py): a departure they explain is the machine's.
    cores_free: float | None = None
    full_collections_per_request: float | None = None
    cpu_used_ratio: float | None = None  # its requests' CPU (Server-Timing) over the model's for as many
    # Per kind: its CPU beside another computing request of its process over alone (window.py's).
    shared_cpu_ratio: dict[str, float] = {}
    explained_per_s: float | None = None
    explained_p99_s: float | None = None
    load_average: float | None = None  # the machine's 1-minute load average as the run ended
    slowest: TailSplit | None = None  # where its slowest requests spent their time (one clock's)
    # The run's warm-up (not judged), and the window's prediction from the CPU the warm-up's requests
    # (and earlier runs') used (`warmup_cpu_ratio`: over the plan's), the cores it left the server.
    warmup_s: float = 0.0
    warmup_cpu_ratio: float | None = None
    warmup_full_collections_per_request: float | None = None  # counted there, with the plan's beside
    warmup_cores_free: float | None = None  # its CPUs less the others' (the load client's not)
    warmup_client_cpu_s: float | None = None  # the load client's CPU per request in it, on those cores
    warmup_predicted_per_s: float | None = None
    warmup_predicted_p99_s: float | None = None
    warmup_p99_band_s: list[float] = []

    @property
    def sustained_said_p99_s(self) -> float | None:
        """The sustained p99 the answer gives: on the CPU the proof used where it was proved."""
        return self.sustained_p99_s if self.sustained_used_p99_s is None else self.sustained_used_p99_s

    def band(self) -> list[float]:
        """The p99 band of the prediction the run is judged against (its warm-up's where made)."""
        return self.warmup_p99_band_s if self.warmup_predicted_p99_s is not None else self.p99_band_s

    def departures(self, brief: bool = False) -> list[str]:
        """`rate 0.82x predicted`: where measured and predicted are more than DEPARTS apart, judged
        against the run's own prediction (from its warm-up's CPU) where it made one; `brief`: that
        alone (a headline's), without the band and what explains it."""
        found = []
        own = self.warmup_predicted_per_s is not None and self.warmup_predicted_p99_s is not None
        for what, measured, planned, warm in (
            ("rate", self.measured_per_s, self.predicted_per_s, self.warmup_predicted_per_s),
            ("p99", self.measured_p99_s, self.predicted_p99_s, self.warmup_predicted_p99_s),
        ):
            predicted = warm if own and warm is not None else planned
            if measured is not None and predicted > 0 and abs(measured / predicted - 1) > DEPARTS:
                said = f"{what} {measured / predicted:.2f}x predicted"
                if own and planned > 0:
                    plan = f"{measured / planned:.2f}x the plan's"
                    said += f" before its window, {plan}" if brief else f" before its window ({plan})"
                if what == "p99" and len(band := self.band()) == 2 and not brief:
                    inside = "within" if band[0] <= measured <= band[1] else "beyond"
                    said += f", {inside} the {seconds_between(band[0], band[1])} its draws give one run"
                found.append(said)
        if brief:
            return found
        if found and self.cores_free is not None and self.explained_per_s is not None:
            p99 = seconds(self.explained_p99_s) if self.explained_p99_s is not None else "-"
            ratio = self.cpu_used_ratio
            used = f" and its requests used {ratio:.2f}x the CPU the model drew" if ratio is not None else ""
            if self.full_collections_per_request:  # each a stop of its process
                used += f", a full collection every {1 / self.full_collections_per_request:,.0f} requests"
            found.append(
                f"the machine and its load client left it {self.cores_free:.2f} cores{used}; with the "
                f"client beside it, the model predicts {self.explained_per_s:.1f}/s at p99 {p99}"
            )
        if found and self.slowest is not None:
            found.append(self.slowest.said())
        if found:
            found.extend(
                f"a {kind} beside another in its process used {ratio:.2f}x the CPU of one alone in it"
                for kind, ratio in self.shared_cpu_ratio.items()
                if ratio >= SHARED_CPU_NOTABLE
            )
        if found and self.load_average is not None:
            found.append(f"load average {self.load_average:.1f}")
        return found

    def met(self, objective: Objective) -> bool:
        """The run served what was offered, none failed, and its p99 kept the objective: each within
        DEPARTS, the bar the predictions are held to (a p99 over one short run is that noisy)."""
        if self.measured_per_s is None or self.measured_p99_s is None or self.failed:
            return False
        served = self.measured_per_s >= self.offered_per_s * (1 - DEPARTS)
        return served and self.measured_p99_s <= objective.p99_s * (1 + DEPARTS)

    def holds(self, objective: Objective) -> bool:
        """met(), and where traffic staying at the rate was worked out, it keeps the objective too."""
        said = self.sustained_said_p99_s
        return self.met(objective) and (said is None or said <= objective.p99_s)


class SizedSummary(BaseModel):
    """A configuration sizing started: its plan and its proof runs."""

    shape: Literal["sizing"] = "sizing"
    role: Role
    family: str
    server: str
    label: str  # `gunicorn gthread, 2 workers x 24 threads`
    processes: int
    threads: int | None  # requests one process runs at once (threads or connections); None: no limit
    per_process_unit: str = ""  # "threads", "connections"
    env: dict[str, str]
    memory_bytes: int
    accept: Literal["shared", "per_worker"] = "per_worker"  # how its workers take connections
    preemptive: bool = True  # threads share a process's core; greenlets and event loops do not
    threads_beside: bool = False  # an event loop: what its requests hand to threads runs beside it
    sustainable_per_s: float  # predicted: the most it serves with its p99 within the objective
    predicted_p99_s: float
    levels: list[Level] = []
    # The run's, repeated in each plan (every proved configuration carries them).
    pod: PodSize
    objective: Objective
    kinds: list[KindCost] = []
    caveats: list[Caveat] = []
    search_cpu_s: float = 0.0
    simulations: int = 0
    error: str | None = None  # why it was not proved (it did not start)
    fixed_label: str | None = None  # the flows' pick, where it is this run's proposal or a family's best
    needs_pod: PodSize | None = None  # role "needed": the pod that serves the target rate
    # Sized again ("resized", "needed"): a request's CPU in its family's proofs over the plan's (all of it).
    resized_on: float | None = None
    floor: Floor | None = None  # what its requests alone took beyond the model, before its proof
    planned_floor_s: list[float] = []  # its family's the plan drew (flow/servingcost.py), quantiles

    def at_sustainable(self) -> Level | None:
        return max(self.levels, key=lambda level: level.offered_per_s, default=None)

    @property
    def runs_here(self) -> bool:
        """Started and proved on this machine: sized for its pod, with a rate to offer it."""
        return self.needs_pod is None and bool(self.levels)


class FixedBest(BaseModel):
    """The best of the values' fixed configurations (the flows' recommendation) on the mix."""

    target: str
    label: str
    flows_per_s: float  # its flows' rates on each path, combined in the mix's weights


class SizingConclusion(BaseModel):
    shape: Literal["sizing"] = "sizing"
    pod: PodSize
    objective: Objective
    proposed: SizedSummary | None
    families: list[SizedSummary]  # the best of each other family, proved beside it
    fixed: SizedSummary | None = None  # the lab's recommended fixed configuration, proved the same way
    fixed_best: FixedBest | None = None
    needed: SizedSummary | None = None  # RATE= beyond the pod: the smallest on the pod it would need
    resized: SizedSummary | None = None  # the proposal searched again on the proofs' CPU
    caveats: list[Caveat] = []
    search_cpu_s: float = 0.0
    simulations: int = 0
    headline: str  # the answer, first: "Serve X with ..."
    # What the answer names: the proposal, unless `proved_best` names another (a proof decides); None: none.
    chosen: str | None = None

    def each(self) -> list[SizedSummary]:
        """Every configuration it names, each once (the flows' pick is often the proposal or a family's
        best), in order: the proposal, its re-sizing, the families, the pick, the pod needed."""
        named = [self.proposed, self.resized, *self.families, self.fixed, self.needed]
        return [s for i, s in enumerate(named) if s is not None and s not in named[:i]]  # as read back too

    def proved_best(self) -> tuple[SizedSummary, Level] | None:
        """What the answer names instead of the proposal, a proof deciding. With RATE=, where its proof did
        not keep it: the smallest (memory, then processes) whose proof kept it at the rate or above (where
        its proof did not run: its re-sizing, if that kept it), at the level nearest the rate. Without:
        its re-sizing, where that kept the objective serving no less than any run that kept it; else, where
        its proof did not, the run that kept it serving the most. Kept: met; with RATE=, `Level.holds`."""
        rate = self.objective.rate_per_s
        kept = Level.met if rate is None else Level.holds
        proposed = self.proposed.at_sustainable() if self.proposed else None
        proposal_kept = proposed is not None and kept(proposed, self.objective)
        unproved = proposed is None or proposed.measured_per_s is None
        held = [(summary, level) for summary in self.each() for level in summary.levels
                if kept(level, self.objective) and (rate is None or level.offered_per_s >= rate)]  # fmt: skip
        if rate is not None:  # the smallest (at its level nearest the rate); not run: its re-sizing alone
            held = [h for h in held if not proposal_kept and (not unproved or h[0] is self.resized)]
            size = [(summary.memory_bytes, summary.processes, level.offered_per_s) for summary, level in held]
            return held[size.index(min(size))] if held else None
        best = max(held, key=lambda held: _served(held[1]), default=None)
        resized = self.resized.at_sustainable() if self.resized else None
        if (
            self.resized is not None
            and resized is not None
            and kept(resized, self.objective)
            and (best is None or _served(resized) >= _served(best[1]))
        ):
            return self.resized, resized
        return None if unproved or proposal_kept else best


def _served(level: Level) -> float:
    return level.measured_per_s or 0.0
