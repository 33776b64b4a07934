"""The machine's stability over the run, from the stability probes' raw records (stability.py
measures them; the spread and drift are judged as pyperf judges its own)."""

from __future__ import annotations

import statistics

import numpy as np

from labtester.rawlog import Record
from labtester.stability import UNSTABLE_CV_PCT, UNSTABLE_DRIFT_PCT, ProbeSummary, Stability


def summarize(records: list[Record]) -> Stability | None:
    probes = [r for r in records if r["type"] == "probe" and r["samples_s"]]
    if not probes:
        return None
    by_target: dict[str, list[Record]] = {}
    for record in probes:
        by_target.setdefault(record["target"], []).append(record)
    relative: list[float] = []
    drift = 0.0
    for runs in by_target.values():
        median = statistics.median(t for r in runs for t in r["samples_s"])
        relative += [t / median for r in runs for t in r["samples_s"]]
        medians = [statistics.median(r["samples_s"]) for r in runs]
        drift = max(drift, (max(medians) / min(medians) - 1) * 100)
    array = np.asarray(relative)
    cv = float(array.std(ddof=1) / array.mean() * 100) if array.size > 1 else 0.0
    return Stability(
        probes=[
            ProbeSummary(
                target=r["target"],
                label=r["label"],
                at=r["at"],
                p50_s=statistics.median(r["samples_s"]),
                samples=len(r["samples_s"]),
            )
            for r in probes
        ],
        samples=int(array.size),
        p5_pct=float(np.percentile(array, 5) * 100),
        p95_pct=float(np.percentile(array, 95) * 100),
        cv_pct=cv,
        drift_pct=drift,
        unstable=cv > UNSTABLE_CV_PCT or drift > UNSTABLE_DRIFT_PCT,
    )
