"""A proof run's prediction on CPU it measured itself: the model re-run on the CPU each kind's
requests used in some part of the run, on the run's own sends, judged over its window (the sends
after its warm-up).

Two uses, one code. During the run, on its warm-up's requests (the CPU used in the configuration
proved, minutes after the flows the plan drew from), made before the window it predicts is measured:
the prediction a proof can check. After it, on the window's own requests and the cores the machine
left the server: what explains a departure (fitted to the window, so never the yardstick).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from labtester.load import Sample
from labtester.sizing.arrivals import SEED
from labtester.sizing.configuration import Configuration
from labtester.sizing.document import MOST_PREDICTED, KindCost, SizedSummary
from labtester.sizing.floor import Floor, floor_of
from labtester.sizing.kinds import FEWEST, RequestKind
from labtester.sizing.model import BAND_DRAWS, Predicted, simulate, sustained_p99
from labtester.sizing.overlap import Company, at
from labtester.sizing.proof import proof_run
from labtester.sizing.quantiles import spread


def cpu_used(kinds: Sequence[KindCost], samples: Sequence[Sample]) -> dict[str, list[float]]:
    """Each kind's answered requests' CPU (their Server-Timing), by kind."""
    return {
        k.name: [s.cpu_s for s in samples if s.ok and s.path == k.name and s.cpu_s is not None] for k in kinds
    }


def used_ratio(
    kinds: Sequence[KindCost], samples: Sequence[Sample], neighbours: Sequence[Sample] | None = None
) -> float | None:
    """The CPU the answered requests of `samples` used over what the plan drew for as many of each
    kind: at the company each kept in its process where the kind's CPU moves with it (overlap.py;
    its company among `neighbours`, default `samples`: a proof gives its whole run, the measured
    ones among them as the same objects), else the kind's mean."""
    return _ratio([(used, drawn) for used, drawn, _ in _used_and_drawn(kinds, samples, neighbours).values()])


def measured_ratios(
    kinds: Sequence[KindCost], samples: Sequence[Sample], neighbours: Sequence[Sample] | None = None
) -> tuple[float | None, dict[str, float]]:
    """`used_ratio` over the kinds with FEWEST answered requests in `samples`: all of them together
    (None where no kind has), and each one's."""
    sums = {
        name: (used, drawn)
        for name, (used, drawn, count) in _used_and_drawn(kinds, samples, neighbours).items()
        if count >= FEWEST and drawn > 0
    }
    return _ratio(list(sums.values())), {name: used / drawn for name, (used, drawn) in sums.items()}


def _ratio(sums: Sequence[tuple[float, float]]) -> float | None:
    """What was used over what was drawn, summed over (used, drawn) pairs; None where none was drawn."""
    drawn = sum(d for _, d in sums)
    return sum(u for u, _ in sums) / drawn if drawn > 0 else None


def _used_and_drawn(
    kinds: Sequence[KindCost], samples: Sequence[Sample], neighbours: Sequence[Sample] | None
) -> dict[str, tuple[float, float, int]]:
    """By kind: the CPU its answered requests used, what the plan drew for them, and how many. What
    was drawn holds the full collections the kind sets off (drawn as stops), as what was used does."""
    by_name = {k.name: k for k in kinds}
    curves = {k.name: tuple((c, cpu) for c, cpu in k.cpu_by_company) for k in kinds if k.cpu_by_company}
    company = Company(samples if neighbours is None else neighbours) if curves else None
    collecting = {k.name: k.full_collections_per_request * k.full_collection_cpu_s for k in kinds}
    sums: dict[str, tuple[float, float, int]] = {}
    for s in samples:
        if not s.ok or s.cpu_s is None or (k := by_name.get(s.path)) is None:
            continue
        others = company.others(s) if company is not None and k.name in curves else None
        drawn = (at(curves[k.name], others) if others is not None else k.mean_cpu_s) + collecting[k.name]
        used, drawn_before, count = sums.get(k.name, (0.0, 0.0, 0))
        sums[k.name] = (used + s.cpu_s, drawn_before + drawn, count + 1)
    return sums


def shared_cpu_ratio(
    kinds: Sequence[KindCost], samples: Sequence[Sample], neighbours: Sequence[Sample] | None = None
) -> dict[str, float]:
    """Per kind that computes more than it waits: the median CPU of its requests (of `samples`, the
    answered ones) that ran beside another such request in the same process for half their time or
    more, over the median of those that ran alone in theirs, where each has FEWEST. A neighbour is
    any request of `neighbours` (default: `samples`; a proof gives its whole run, warm-up and
    failures included, so a request at its window's edge is not taken for alone), the measured ones
    among them as the same objects (a request is not its own company). On the Flask shop's proofs
    /report's was 1.24-1.45 on gthread and granian-wsgi 4 x 2 / 4 x 4 and 1.53-1.99 on granian-wsgi
    2 x 8 (SQLite): likeliest, threads handing the GIL back and forth around work that releases it,
    each hand-over costing both. A kind's CPU is not one figure there, and a run whose requests met
    in their processes more or less than the plan's did uses more or less. Processes are told apart
    by pid alone: one server's, as a proof runs (replicas could share pids)."""
    computing = {k.name for k in kinds if k.mean_cpu_s >= k.wait_s}
    company = Company([s for s in (samples if neighbours is None else neighbours) if s.path in computing])
    by_kind: dict[str, list[tuple[float, float]]] = {}  # (CPU, share of its time beside another)
    for s in samples:
        if s.ok and s.path in computing and s.cpu_s is not None and (share := company.share(s)) is not None:
            by_kind.setdefault(s.path, []).append((s.cpu_s, share))
    ratios: dict[str, float] = {}
    for name, mine in sorted(by_kind.items()):
        alone = [cpu for cpu, share in mine if share <= 0]
        shared = [cpu for cpu, share in mine if share >= 0.5]
        if len(alone) >= FEWEST and len(shared) >= FEWEST and statistics.median(alone) > 0:
            ratios[name] = statistics.median(shared) / statistics.median(alone)
    return ratios


def measured_kinds(
    kinds: Sequence[KindCost],
    used: Mapping[str, Sequence[float]],
    overhead_s: float | None = None,
    client_s: float | None = None,
    collections: tuple[float, float] | None = None,
) -> list[RequestKind]:
    """The plan's kinds, each drawing its CPU from what its requests used here where enough were
    answered (FEWEST: at the company they met here, so not moved by company), else from the plan's
    spread and its CPU by company; with the server's own CPU per request measured here
    (`overhead_s`), else the plan's; the load client's (`client_s`), else the plan's; and the full
    collections per request and the CPU of one (`collections`, sizing/collected.py), else the plan's.
    The server's, the client's and the collections per request are measured over the whole mix: each
    kind's is the plan's times what was measured over the plan's mean (alike where the plan had
    none), so a heavy kind keeps more of it than a light; a collection's CPU is taken as measured."""
    total = sum(k.weight for k in kinds)

    def moved(value: Callable[[KindCost], float], measured: float | None) -> Callable[[KindCost], float]:
        planned = sum(k.weight * value(k) for k in kinds) / total if total > 0 else 0.0
        if measured is None:
            return value
        return lambda k: measured if planned <= 0 else value(k) * measured / planned

    server_of = moved(lambda k: k.overhead_s, overhead_s)
    client_of = moved(lambda k: k.client_s, client_s)
    per_request, each_s = collections if collections is not None else (None, None)
    collections_of = moved(lambda k: k.full_collections_per_request, per_request)
    # A collection's CPU is its process's, whichever kind set it off: the measured, as it is.
    collection_cpu_of = (lambda k: k.full_collection_cpu_s) if each_s is None else (lambda k: each_s)

    return [
        RequestKind(
            k.name,
            k.weight,
            k.cpu_s,
            k.wait_s,
            server_of(k),
            k.cores_per_process,
            spread(used[k.name])
            if (measured := len(used.get(k.name, ())) >= FEWEST)
            else tuple(k.cpu_spread_s),
            tuple(k.wait_spread_s),
            k.elsewhere_share,
            () if measured else tuple((company, cpu) for company, cpu in k.cpu_by_company),
            k.close_s,
            client_of(k),
            collections_of(k),
            collection_cpu_of(k),
        )
        for k in kinds
    ]


def scaled_kinds(
    kinds: Sequence[KindCost],
    ratios: Mapping[str, float],
    overhead_s: float | None = None,
    client_s: float | None = None,
    collections: tuple[float, float] | None = None,
) -> list[RequestKind]:
    """The plan's kinds, each one's CPU (its spread and its CPU by company) times its ratio in
    `ratios` (`measured_ratios`: what its requests used somewhere over what the plan drew for them):
    the level measured there, and how it moves with company as the flows measured it, for a
    configuration that meets other company than where it was measured (another process count);
    with the server's own CPU, the client's and the full collections measured there
    (`measured_kinds`; None: the plan's)."""
    return [
        replace(
            kind,
            cpu_s=kind.cpu_s * ratio,
            cpu_spread_s=tuple(cpu * ratio for cpu in kind.cpu_spread_s),
            cpu_by_company=tuple((company, cpu * ratio) for company, cpu in kind.cpu_by_company),
        )
        if (ratio := ratios.get(kind.name, 1.0)) != 1.0
        else kind
        for kind in measured_kinds(kinds, {}, overhead_s, client_s, collections)
    ]


def configuration_of(summary: SizedSummary) -> Configuration:
    return Configuration(
        summary.family,
        summary.processes,
        summary.threads,
        summary.accept,
        summary.preemptive,
        summary.threads_beside,
    )


def predicted_window(
    summary: SizedSummary,
    rate_per_s: float,
    cores: float,
    duration_s: float,
    warmup_s: float,
    used: Mapping[str, Sequence[float]],
    overhead_s: float | None = None,
    client_s: float | None = None,
    floor_s: tuple[float, ...] = (),
    collections: tuple[float, float] | None = None,
    seed: int = SEED,
) -> Predicted:
    """The run's window predicted on `used` (each kind's CPU, measured), `cores`, the server's own
    CPU per request (`overhead_s`; None: the plan's), the load client's on those cores (`client_s`;
    None: the plan's), the floor added to each request and the full collections (`collections`:
    per request, the CPU of one; None: the plan's), on the sends of `seed` (its level's): its rate,
    its p99 and its band."""
    kinds = measured_kinds(summary.kinds, used, overhead_s, client_s, collections)
    config = configuration_of(summary)
    args = (kinds, config, cores, rate_per_s, duration_s, MOST_PREDICTED, warmup_s, BAND_DRAWS, floor_s)
    return proof_run(*args, seed=seed)


def floor_from(
    summary: SizedSummary,
    times: Sequence[float],
    picked: Sequence[int],
    samples: Sequence[Sample],
    client_s: float,
) -> tuple[float, ...]:
    """The floor (floor.py) of a run of requests alone: the latencies of its answered
    `samples` (sent at `times`, of the kinds `picked`) against the model's of the same sends, on the
    CPU they used, the pod's cores and the client's `client_s` a request."""
    done = [s for s in samples if s.ok]
    kinds = measured_kinds(summary.kinds, cpu_used(summary.kinds, done), client_s=client_s)
    rate = len(times) / times[-1] if times and times[-1] > 0 else 0.0
    run = simulate(
        kinds,
        configuration_of(summary),
        summary.pod.cores,
        rate,
        len(times),
        arrivals=times,
        picked=picked,
    )
    return floor_of([s.from_schedule_s for s in done], run.latencies_s)


def floor_for(own: Floor | None, planned_s: Sequence[float]) -> tuple[float, ...]:
    """The floor a configuration's predictions after its plan take: its `own`, where its requests
    alone measured one before its proof, else its family's that the plan drew (`planned_s`)."""
    return tuple((own.quantiles_s if own else []) or planned_s)


def sustained_on(
    summary: SizedSummary,
    rate_per_s: float,
    cores: float,
    duration_s: float,
    used: Mapping[str, Sequence[float]],
    overhead_s: float | None = None,
    floor_s: tuple[float, ...] = (),
) -> float:
    """The p99 of `duration_s` of traffic at this rate (`sustained_p99`) on `used` (each kind's CPU,
    measured) and the server's own CPU per request (`overhead_s`; None: the plan's), beside the
    plan's client, with the floor `floor_s` on each request (as the plan's sustained figure)."""
    kinds = measured_kinds(summary.kinds, used, overhead_s)
    return sustained_p99(kinds, configuration_of(summary), cores, rate_per_s, duration_s, floor_s)


def overhead_of(read: Sequence[tuple[float | None, Sequence[Sample]]]) -> float | None:
    """The serving processes' CPU per answered request beyond the requests' own, over runs given as
    each one's processes' CPU (None where not read) and its requests; None where none was answered."""
    measured = [(float(cpu), samples) for cpu, samples in read if cpu]
    done = [s.cpu_s for _, samples in measured for s in samples if s.ok and s.cpu_s is not None]
    if not done:
        return None
    return max(0.0, (sum(cpu for cpu, _ in measured) - sum(done)) / len(done))
