"""The flow second by second, as Locust draws it: responses and failures per second, latency
percentiles, users running, and requests in flight."""

from __future__ import annotations

import math

from pydantic import BaseModel

from labtester.load import Sample
from labtester.stats import percentiles


class FlowSecond(BaseModel):
    t: float
    requests: int  # answered in this second
    failures: int
    p50: float | None
    p95: float | None
    p99: float | None
    users: int
    in_flight: float  # requests outstanding at the client, averaged over the second


def flow_seconds(
    samples: list[Sample], duration_s: float, users: list[tuple[float, int]]
) -> list[FlowSecond]:
    seconds = math.ceil(duration_s) + 1
    done: list[list[Sample]] = [[] for _ in range(seconds)]
    busy = [0.0] * seconds  # request-seconds outstanding within each second
    for sample in samples:
        end = sample.sent_s + sample.latency_s
        done[min(seconds - 1, int(end))].append(sample)
        for second in range(int(sample.sent_s), min(seconds, int(end) + 1)):
            busy[second] += max(0.0, min(end, second + 1) - max(sample.sent_s, second))
    series = []
    for second in range(seconds):
        latencies = [s.latency_s for s in done[second] if s.ok]
        points = percentiles(latencies, (50, 95, 99)) if latencies else {}
        running = max((count for at, count in users if at <= second + 1), default=0)
        series.append(
            FlowSecond(
                t=float(second),
                requests=len(done[second]),
                failures=sum(1 for s in done[second] if s.error),
                p50=points.get("p50"),
                p95=points.get("p95"),
                p99=points.get("p99"),
                users=running,
                in_flight=busy[second],
            )
        )
    return series
