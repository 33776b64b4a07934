"""What the load-shape scenarios share: sample records, latency tables, failures, time series."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from labtester.loadclient import SAMPLE_FIELDS, Sample
from labtester.stats import percentiles

# Locust's percentile columns, computed from the raw times.
LOCUST_PERCENTILES = (50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100)


def encode(samples: list[Sample]) -> dict[str, Any]:
    """Samples as a compact table for the raw log: field names once, then rows."""
    return {"fields": list(SAMPLE_FIELDS), "rows": [s.as_row() for s in samples]}


def decode(table: dict[str, Any]) -> list[Sample]:
    return [Sample(*row) for row in table["rows"]]


def failures_by_type(samples: list[Sample]) -> dict[str, int]:
    return dict(Counter(s.error for s in samples if s.error).most_common())


def status_counts(samples: list[Sample]) -> dict[str, int]:
    return dict(Counter(str(s.status) if s.status else s.error or "?" for s in samples).most_common())


def latency_table(latencies: list[float], points: tuple[float, ...] = LOCUST_PERCENTILES) -> dict[str, float]:
    if not latencies:
        return {}
    array = np.asarray(latencies)
    return {
        "min": float(array.min()),
        "median": float(np.median(array)),
        "mean": float(array.mean()),
        "max": float(array.max()),
        **percentiles(latencies, points),
    }


def per_second(
    samples: list[Sample], duration_s: float, latency: str = "latency_s"
) -> list[dict[str, float]]:
    """Throughput and latency over time, bucketed by the second each request finished in."""
    buckets: dict[int, list[Sample]] = {}
    for sample in samples:
        buckets.setdefault(int(sample.sent_s + sample.latency_s), []).append(sample)
    series = []
    for second in range(int(np.ceil(duration_s)) + 1):
        done = buckets.get(second, [])
        values = [getattr(s, latency) if latency != "from_schedule_s" else s.from_schedule_s for s in done]
        series.append(
            {
                "t": float(second),
                "requests": float(len(done)),
                "failures": float(sum(1 for s in done if s.error)),
                **(
                    {k: v for k, v in percentiles(values, (50, 95)).items()}
                    if values
                    else {"p50": None, "p95": None}
                ),
            }
        )
    return series
