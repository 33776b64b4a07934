"""What the report shows of the bursts: tables, plots, and requests.csv (one row per request)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table

from labtester.atomic import replacing
from labtester.plotting import plt, save_png
from labtester.rawlog import Record
from labtester.scenarios.bursts.analyse import BurstsSummary, EndpointBursts, Point
from labtester.scenarios.bursts.served import accounts, served

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult

REQUESTS_CSV = "requests.csv"
CSV_COLUMNS = [
    "target",
    "endpoint",
    "path",
    "phase",
    "n",
    "repeat",
    "argument",
    "status",
    "error",
    "released_at",
    "sent_at",
    "received_at",
    "latency_s",
    "server_started_at",
    "server_finished_at",
    "server_duration_s",
    "cpu_s",
    "delivery_lag_s",
    "pid",
    "account",
    "client",
]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def _x(value: float | None, scale: float | None) -> str:
    return f"{value / scale:.2f}" if value is not None and scale else "-"


def _median(values: list[float]) -> float | None:
    return sorted(values)[len(values) // 2] if values else None


def _row(target: str, endpoint: EndpointBursts, point: Point) -> list[str]:
    m, single = point.makespan, endpoint.single_s
    runs = [r for r in point.runs if r.makespan_s is not None]
    verdicts = [r.verdict for r in point.runs]
    return [
        target,
        endpoint.name,
        str(point.n),
        f"{m.median:.3f}" if m else "-",
        _x(m.median if m else None, single),
        _x(point.model_s, single),
        f"{point.ratio:.2f}" if point.ratio is not None else "-",
        _ms(_median([r.release_offset_s for r in runs if r.release_offset_s is not None])),
        _ms(_median([r.delivery_lag_s for r in runs if r.delivery_lag_s is not None])),
        ", ".join(f"{verdicts.count(v)} {v}" for v in ("interference", "departs", "failed") if v in verdicts)
        or "-",
    ]


def bursts_table(results: Results) -> Table:
    table = Table(
        title="Bursts: n requests released together; makespan = last response - release (median of repeats); "
        "T = one request alone; model = processor sharing over the requests' measured CPU seconds",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "target",
        "endpoint",
        "n",
        "makespan s",
        "x T",
        "model x T",
        "meas/model",
        "start ms",
        "lag ms",
        "not agreeing",
    ):
        table.add_column(
            column, justify="left" if column in ("target", "endpoint", "not agreeing") else "right"
        )
    for target, summary in results.summaries(BurstsSummary):
        for endpoint in summary.endpoints:
            for point in endpoint.points:
                table.add_row(*_row(target.name, endpoint, point))
            table.add_section()
    return table


def metrics_table(results: Results) -> Table:
    table = Table(
        title="Requests counted by the server (/metrics) vs sent", box=box.SIMPLE_HEAD, title_justify="left"
    )
    for column in ("target", "endpoint", "sent", "counted", "by status", "kernel iterations", "match"):
        table.add_column(column)
    for target, summary in results.summaries(BurstsSummary):
        for endpoint in summary.endpoints:
            if m := endpoint.metrics:
                table.add_row(
                    target.name,
                    endpoint.name,
                    str(m.sent),
                    f"{m.counted:g}",
                    ", ".join(f"{s}: {c:g}" for s, c in sorted(m.by_status.items())),
                    f"{m.kernel_iterations:g}",
                    "yes" if m.matches else "NO",
                )
    return table


def makespan_plot(results: Results, path: Path) -> Path | None:
    rows = [(t, s) for t, s in results.summaries(BurstsSummary) if any(e.points for e in s.endpoints)]
    if not rows:
        return None
    figure, axes = plt.subplots(1, len(rows), figsize=(4.2 * len(rows), 3.6), squeeze=False, sharey=True)
    for axis, (target, summary) in zip(axes[0], rows, strict=True):
        for endpoint in summary.endpoints:
            points = [p for p in endpoint.points if p.makespan and p.model_s]
            if not points:
                continue
            n = [p.n for p in points]
            low = [p.makespan.median - p.makespan.minimum for p in points if p.makespan]
            high = [p.makespan.maximum - p.makespan.median for p in points if p.makespan]
            medians = [p.makespan.median for p in points if p.makespan]
            line = axis.errorbar(n, medians, yerr=[low, high], marker="o", capsize=3, label=endpoint.name)
            axis.plot(n, [p.model_s for p in points], linestyle="--", color=line[0].get_color(), alpha=0.6)
        axis.set_title(target.name)
        axis.set_xlabel("simultaneous requests n")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    axes[0][0].set_ylabel("makespan s (dashed: model from measured work)")
    return _save(figure, path)


def _largest_bursts(records: list[Record], target: str) -> dict[str, Record]:
    """The first repeat of each endpoint's largest burst."""
    largest: dict[str, Record] = {}
    for record in records:
        if record.get("target") == target and record.get("kind") == "burst" and record["phase"] == "burst":
            best = largest.get(record["endpoint"])
            if best is None or (record["n"], -record["repeat"]) > (best["n"], -best["repeat"]):
                largest[record["endpoint"]] = record
    return largest


def timeline_plot(target: TargetResult, records: list[Record], path: Path) -> Path | None:
    """Who ran when in the largest burst of each endpoint: a bar per request from its server start
    to finish (colour: the process), a tick when the client had the response (the gap is delivery
    lag), its measured CPU seconds written beside it."""
    bursts = _largest_bursts(records, target.name)
    if not bursts:
        return None
    figure, axes = plt.subplots(len(bursts), 1, figsize=(8, 1.0 + 1.2 * len(bursts)), squeeze=False)
    for axis, (endpoint, record) in zip(axes[:, 0], sorted(bursts.items()), strict=True):
        released = record["released_at"]
        taken = accounts(record["requests"])
        colours = {pid: plt.cm.tab10(i % 10) for i, pid in enumerate(sorted({str(a.pid) for a in taken}))}
        for row, request in enumerate(record["requests"]):
            if (account := served(request)) is not None:
                start = account.started_at - released
                axis.barh(row, account.app_s, left=start, color=colours[str(account.pid)])
                if account.cpu_s is not None:
                    axis.text(start, row, f" {account.cpu_s:.2f} CPU s", va="center", fontsize=6)
            axis.plot([request["received_at"] - released], [row], marker="|", color="black")
        axis.set_title(
            f"{endpoint}: n={record['n']}, colour = server pid ({len(colours)} distinct)", fontsize=8
        )
        axis.set_yticks([])
        axis.set_xlim(left=0)
        axis.grid(axis="x", alpha=0.3)
    axes[-1][0].set_xlabel("seconds since release (bar: server start to finish; |: client has the response)")
    figure.suptitle(f"{target.name}: per-request timeline", fontsize=10)
    return _save(figure, path)


def _save(figure: Any, path: Path) -> Path:
    figure.tight_layout()
    return save_png(figure, path)


def request_rows(records: list[Record]) -> Iterator[dict[str, Any]]:
    """Every burst request: what the client saw, and the server's account (Server-Timing, or the
    lab's body where a response had no header)."""
    for record in records:
        if record.get("scenario") != "bursts" or record.get("kind") != "burst":
            continue
        for request in record["requests"]:
            account = served(request)
            yield {
                "target": record["target"],
                "endpoint": record["endpoint"],
                "path": record.get("path"),
                "phase": record["phase"],
                "n": record["n"],
                "repeat": record["repeat"],
                "argument": record["argument"],
                "status": request["status"],
                "error": request["error"],
                "released_at": record["released_at"],
                "sent_at": request["sent_at"],
                "received_at": request["received_at"],
                "latency_s": request["received_at"] - request["sent_at"],
                "server_started_at": account.started_at if account else None,
                "server_finished_at": account.finished_at if account else None,
                "server_duration_s": account.app_s if account else None,
                "cpu_s": account.cpu_s if account else None,
                "delivery_lag_s": request["received_at"] - account.finished_at if account else None,
                "pid": account.pid if account else None,
                "account": account.source if account else None,
                "client": request.get("client", 0),
            }


def write_requests_csv(records: list[Record], path: Path) -> Path:
    with replacing(path, newline="") as file:
        writer = csv.DictWriter(file, CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(request_rows(records))
    return path
