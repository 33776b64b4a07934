"""A proof run's prediction on CPU it measured itself: the model re-run on the CPU each kind's
requests used in some part of the run, on the run's own sends, judged over its window (the sends
after its warm-up).

Two uses, one code. During the run, on its warm-up's requests (the CPU used in the configuration
proved, minutes after the flows the plan drew from), made before the window it predicts is measured:
the prediction a proof can check. After it, on the window's own requests and the cores the machine
left the server: what explains a departure (fitted to the window, so never the yardstick).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from labtester.load import Sample
from labtester.sizing.configuration import Configuration
from labtester.sizing.document import MOST_PREDICTED, KindCost, SizedSummary
from labtester.sizing.model import BAND_DRAWS, FEWEST, Predicted, RequestKind, proof_run, spread


def cpu_used(kinds: Sequence[KindCost], samples: Sequence[Sample]) -> dict[str, list[float]]:
    """Each kind's answered requests' CPU (their Server-Timing), by kind."""
    return {
        k.name: [s.cpu_s for s in samples if s.ok and s.path == k.name and s.cpu_s is not None] for k in kinds
    }


def used_ratio(kinds: Sequence[KindCost], used: Mapping[str, Sequence[float]]) -> float | None:
    """The CPU these requests used over what the plan drew for as many of each kind."""
    drawn = sum(k.mean_cpu_s * len(used.get(k.name, ())) for k in kinds)
    return sum(sum(cpu) for cpu in used.values()) / drawn if drawn > 0 else None


def measured_kinds(
    kinds: Sequence[KindCost], used: Mapping[str, Sequence[float]], overhead_s: float | None = None
) -> list[RequestKind]:
    """The plan's kinds, each drawing its CPU from what its requests used here where enough were
    answered (FEWEST), else from the plan's spread; with the server's own CPU per request measured
    here (`overhead_s`), else the plan's."""
    return [
        RequestKind(
            k.name,
            k.weight,
            k.cpu_s,
            k.wait_s,
            k.overhead_s if overhead_s is None else overhead_s,
            k.cores_per_process,
            spread(used[k.name]) if len(used.get(k.name, ())) >= FEWEST else tuple(k.cpu_spread_s),
            tuple(k.wait_spread_s),
        )
        for k in kinds
    ]


def configuration_of(summary: SizedSummary) -> Configuration:
    return Configuration(
        summary.family, summary.processes, summary.threads, summary.accept, summary.preemptive
    )


def predicted_window(
    summary: SizedSummary,
    rate_per_s: float,
    cores: float,
    duration_s: float,
    warmup_s: float,
    used: Mapping[str, Sequence[float]],
    overhead_s: float | None = None,
) -> Predicted:
    """The run's window predicted on `used` (each kind's CPU, measured), `cores` and the server's own
    CPU per request (`overhead_s`; None: the plan's): its rate, its p99 and its band."""
    kinds = measured_kinds(summary.kinds, used, overhead_s)
    config = configuration_of(summary)
    return proof_run(kinds, config, cores, rate_per_s, duration_s, MOST_PREDICTED, warmup_s, BAND_DRAWS)
