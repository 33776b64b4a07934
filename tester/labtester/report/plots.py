"""PNG plots: makespan against n with the model, and a per-request timeline of one burst."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# matplotlib caches fonts in its config dir: keep it writable under a read-only root filesystem.
os.environ.setdefault("MPLCONFIGDIR", "/tmp/matplotlib")

import matplotlib

matplotlib.use("Agg")  # files only; no display in a Job or on CI
import matplotlib.pyplot as plt

from labtester.scenarios.sweep import variant_sections


def _measured_targets(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in document["targets"] if any(e["bursts"] for e in t["endpoints"])]


def makespan_plot(document: dict[str, Any], path: Path) -> Path | None:
    targets = _measured_targets(document)
    if not targets:
        return None
    figure, axes = plt.subplots(1, len(targets), figsize=(5 * len(targets), 4), squeeze=False, sharey=True)
    for axis, target in zip(axes[0], targets, strict=True):
        for endpoint in target["endpoints"]:
            points = [b for b in endpoint["bursts"] if b["makespan"]]
            if not points:
                continue
            n = [b["n"] for b in points]
            median = [b["makespan"]["median"] for b in points]
            errors = [
                [b["makespan"]["median"] - b["makespan"]["minimum"] for b in points],
                [b["makespan"]["maximum"] - b["makespan"]["median"] for b in points],
            ]
            line = axis.errorbar(n, median, yerr=errors, marker="o", capsize=3, label=endpoint["name"])
            predicted = [b["predicted_s"] for b in points if b["predicted_s"]]
            if len(predicted) == len(points):
                axis.plot(n, predicted, linestyle="--", color=line[0].get_color(), alpha=0.6)
        axis.set_title(target["name"])
        axis.set_xlabel("simultaneous requests n")
        axis.set_xticks(range(1, document["run"]["settings"]["burst_max"] + 1))
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    axes[0][0].set_ylabel("makespan s (dashed: model)")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def timeline_plot(target: dict[str, Any], path: Path) -> Path | None:
    """Who ran when in the largest burst (first repeat) of each endpoint: one bar per request."""
    endpoints = [e for e in target["endpoints"] if e["bursts"]]
    if not endpoints:
        return None
    figure, axes = plt.subplots(len(endpoints), 1, figsize=(9, 1.2 + 1.3 * len(endpoints)), squeeze=False)
    for axis, endpoint in zip(axes[:, 0], endpoints, strict=True):
        repeat = endpoint["bursts"][-1]["repeats"][0]
        pids = sorted({o["body"]["pid"] for o in repeat["requests"] if o["body"]})
        colours = {pid: plt.cm.tab10(i % 10) for i, pid in enumerate(pids)}
        for row, observation in enumerate(repeat["requests"]):
            body = observation["body"]
            if body:
                start = body["started_at"] - repeat["release_at"]
                axis.barh(
                    row, body["finished_at"] - body["started_at"], left=start, color=colours[body["pid"]]
                )
            end = observation["sent_at"] + observation["latency_s"] - repeat["release_at"]
            axis.plot([end], [row], marker="|", color="black")
        axis.set_title(
            f"{endpoint['name']}: n={repeat['n']}, colour = server pid ({len(pids)} distinct)", fontsize=9
        )
        axis.set_yticks([])
        axis.set_xlim(left=0)
        axis.grid(axis="x", alpha=0.3)
    axes[-1][0].set_xlabel("seconds since release (bar: server time, |: client saw the response)")
    figure.suptitle(f"{target['name']}: per-request timeline")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def _with_scenario(document: dict[str, Any], scenario: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (t["name"], t["scenarios"][scenario])
        for t in document["targets"]
        if scenario in t.get("scenarios", {})
    ]


def over_time_plot(document: dict[str, Any], scenario: str, path: Path) -> Path | None:
    """Throughput and latency per second of a ramp or constant-rate run, one line per target."""
    rows = _with_scenario(document, scenario)
    if not rows:
        return None
    figure, (throughput, latency) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for name, summary in rows:
        series = summary["over_time"]
        seconds = [point["t"] for point in series]
        throughput.plot(seconds, [point["requests"] for point in series], label=name)
        latency.plot(seconds, [point["p95"] for point in series], label=f"{name} p95")
    label = "from the scheduled send" if scenario == "rate" else "per request"
    throughput.set_ylabel("responses / s")
    latency.set_ylabel(f"latency s ({label})")
    latency.set_xlabel("seconds since start")
    for axis in (throughput, latency):
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"{scenario}: throughput and latency over time")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def sweep_plot(document: dict[str, Any], path: Path) -> Path | None:
    """One row per variant: speedup against concurrency with each target's bound, and latency
    percentiles with the study's rule (io/cpu) and the measured knee marked."""
    sections = variant_sections(document)
    if not sections:
        return None
    figure, axes = plt.subplots(len(sections), 2, figsize=(12, 4 * len(sections)), squeeze=False)
    names = sorted({name for _, rows in sections for name, _ in rows})
    colours = {name: plt.cm.tab10(i % 10) for i, name in enumerate(names)}
    for (label, rows), (speedup, latency) in zip(sections, axes, strict=True):
        for name, variant in rows:
            colour = colours[name]
            levels = variant["levels"]
            concurrency = [entry["concurrency"] for entry in levels]
            speedup.plot(concurrency, [e["speedup"] for e in levels], marker="o", color=colour, label=name)
            if variant["bound"]:
                speedup.axhline(variant["bound"], linestyle="--", color=colour, alpha=0.6)
            for key, style in (("p50_s", ":"), ("p95_s", "--"), ("p99_s", "-")):
                latency.plot(
                    concurrency,
                    [entry[key] for entry in levels],
                    linestyle=style,
                    color=colour,
                    label=name if key == "p99_s" else None,
                )
            if variant["degrades_at"]:
                knee = next(e for e in levels if e["concurrency"] == variant["degrades_at"])
                latency.plot([knee["concurrency"]], [knee["p99_s"]], marker="X", markersize=10, color=colour)
        rule = rows[0][1]["recommended_worker_connections"]
        if rule:
            for axis in (speedup, latency):
                axis.axvline(rule, color="grey", linestyle="-.", alpha=0.7)
        speedup.set_title(f"{label}: speedup (dashed: bound 1/(1 - p); dash-dot: io/cpu)", fontsize=9)
        latency.set_title(f"{label}: p50 dotted, p95 dashed, p99 solid (X: p99 degrades)", fontsize=9)
        ticks = sorted({entry["concurrency"] for _, variant in rows for entry in variant["levels"]})
        for axis in (speedup, latency):
            axis.set_xscale("log", base=2)
            axis.set_xticks(ticks, [str(tick) for tick in ticks])
            axis.set_xlabel("concurrency")
            axis.grid(alpha=0.3)
            axis.legend(fontsize=7)
        latency.set_ylabel("seconds")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def write_plots(document: dict[str, Any], directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    plots = [makespan_plot(document, directory / "makespan.png")]
    plots += [timeline_plot(t, directory / f"timeline-{t['name']}.png") for t in _measured_targets(document)]
    plots += [sweep_plot(document, directory / "sweep.png")]
    plots += [over_time_plot(document, s, directory / f"{s}-over-time.png") for s in ("ramp", "rate")]
    return [p for p in plots if p is not None]
