"""The summary people read in a terminal or in `kubectl logs`: tables, then findings."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from labtester.scenarios.sweep import short_label, variant_sections


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**20:.0f}"


def _roles(census: dict[str, Any]) -> str:
    counts: dict[str, int] = {}
    for process in census["processes"]:
        counts[process["role"]] = counts.get(process["role"], 0) + 1
    return ", ".join(f"{count} {role}" for role, count in sorted(counts.items()))


def census_table(document: dict[str, Any]) -> Table | None:
    table = Table(title="Process census", box=box.SIMPLE_HEAD, title_justify="left")
    for column in (
        "target",
        "server",
        "workers",
        "processes (idle)",
        "roles (idle)",
        "threads",
        "RSS MB",
        "processes under load",
    ):
        table.add_column(column)
    for target in document["targets"]:
        info, idle = target["info"] or {}, target["census"]["idle"]
        loaded = max(target["census"]["under_load"], key=lambda c: c["census"]["process_count"], default=None)
        under_load = f"{loaded['census']['process_count']} ({loaded['endpoint']})" if loaded else "-"
        table.add_row(
            target["name"],
            f"{info.get('framework', '?')}/{info.get('server', '?')}",
            str(info.get("workers", "-")),
            str(idle["process_count"]) if idle else "-",
            _roles(idle) if idle else "-",
            str(idle["thread_count"]) if idle else "-",
            _mb(idle["rss_bytes"] if idle else None),
            under_load,
        )
    return table


def calibration_table(document: dict[str, Any]) -> Table | None:
    table = Table(title="Calibration (sync-cpubound, server time)", box=box.SIMPLE_HEAD, title_justify="left")
    for column in ("target", "iterations", "N s", "measured s", "error %", "rounds", "ok"):
        table.add_column(column, justify="right" if column != "target" else "left")
    for target in document["targets"]:
        c = target["calibration"]
        if c:
            table.add_row(
                target["name"],
                str(c["iterations"]),
                f"{c['target_seconds']:g}",
                f"{c['measured_seconds']:.3f}",
                f"{c['error_pct']:+.1f}",
                str(len(c["rounds"])),
                "yes" if c["within_tolerance"] else "NO",
            )
    return table


def bursts_table(document: dict[str, Any]) -> Table | None:
    table = Table(
        title="Bursts: n requests released together; makespan = last completion - release "
        "(median of repeats); T = one request alone; model = processor sharing",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "target",
        "endpoint",
        "n",
        "makespan s",
        "min-max s",
        "x T",
        "model x T",
        "measured/model",
        "fails",
    ):
        table.add_column(column, justify="left" if column in ("target", "endpoint") else "right")
    for target in document["targets"]:
        for endpoint in target["endpoints"]:
            single = endpoint["single_s"]
            for burst in endpoint["bursts"]:
                m = burst["makespan"]
                failures = sum(1 for r in burst["repeats"] for o in r["requests"] if o["error"])
                table.add_row(
                    target["name"],
                    endpoint["name"],
                    str(burst["n"]),
                    f"{m['median']:.3f}" if m else "-",
                    f"{m['minimum']:.2f}-{m['maximum']:.2f}" if m else "-",
                    f"{burst['makespan_over_single']:.2f}" if burst["makespan_over_single"] else "-",
                    f"{burst['predicted_s'] / single:.2f}" if burst["predicted_s"] and single else "-",
                    f"{burst['ratio']:.2f}" if burst["ratio"] else "-",
                    str(failures),
                )
            table.add_section()
    return table


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def _with_scenario(document: dict[str, Any], scenario: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (t["name"], t["scenarios"][scenario])
        for t in document["targets"]
        if scenario in t.get("scenarios", {})
    ]


def closed_table(document: dict[str, Any]) -> Table | None:
    rows = _with_scenario(document, "closed")
    if not rows:
        return None
    table = Table(title="Closed loop: R requests, C at a time", box=box.SIMPLE_HEAD, title_justify="left")
    for column in (
        "target",
        "R",
        "C",
        "total s",
        "req/s",
        "success %",
        "statuses",
        "min ms",
        "median ms",
        "mean ms",
        "max ms",
    ):
        table.add_column(column, justify="left" if column in ("target", "statuses") else "right")
    for name, c in rows:
        latency = c["latency_s"]
        table.add_row(
            name,
            str(c["requests"]),
            str(c["params"]["concurrency"]),
            f"{c['wall_s']:.1f}",
            f"{c['throughput_per_s']:.0f}",
            f"{c['success_ratio'] * 100:.1f}",
            ", ".join(f"{k}: {v}" for k, v in c["status_counts"].items()),
            *(_ms(latency.get(k)) for k in ("min", "median", "mean", "max")),
        )
    return table


RAMP_PERCENTILES = ("p50", "p66", "p75", "p80", "p90", "p95", "p98", "p99", "p99.9", "p99.99", "p100")


def ramp_table(document: dict[str, Any]) -> Table | None:
    rows = _with_scenario(document, "ramp")
    if not rows:
        return None
    table = Table(title="Ramp (Locust's statistics; times in ms)", box=box.SIMPLE_HEAD, title_justify="left")
    for column in (
        "target",
        "# reqs",
        "# fails",
        "med",
        "avg",
        "min",
        "max",
        "req/s",
        "fail/s",
        *(p[1:] + "%" for p in RAMP_PERCENTILES),
    ):
        table.add_column(column, justify="left" if column == "target" else "right")
    for name, r in rows:
        stats = r["stats"]
        table.add_row(
            name,
            str(stats["requests"]),
            str(stats["failures"]),
            *(_ms(stats.get(k)) for k in ("median", "mean", "min", "max")),
            f"{stats['requests_per_s']:.1f}",
            f"{stats['failures_per_s']:.2f}",
            *(_ms(stats.get(p)) for p in RAMP_PERCENTILES),
        )
    return table


def sweep_table(document: dict[str, Any]) -> Table | None:
    sections = variant_sections(document)
    if not sections:
        return None
    table = Table(
        title="Sweep: throughput speedup over concurrency 1 against the bound 1/(1 - p); variant = cpu/io ms "
        "x parts of the wait; rule = io/cpu, the study's worker_connections",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "variant",
        "rule",
        "target",
        "concurrency",
        "req/s",
        "speedup",
        "bound",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "CPU %",
        "fails",
        "",
    ):
        table.add_column(column, justify="left" if column in ("variant", "target", "") else "right")
    for _, rows in sections:
        for name, variant in rows:
            rule = variant["recommended_worker_connections"]
            for index, entry in enumerate(variant["levels"]):
                cpu = entry["cpu_utilisation"]
                note = "<- p99 degrades" if entry["concurrency"] == variant["degrades_at"] else ""
                first = index == 0
                table.add_row(
                    short_label(variant["params"]) if first else "",
                    ("-" if rule is None else f"{rule:.0f}") if first else "",
                    name if first else "",
                    str(entry["concurrency"]),
                    f"{entry['throughput_per_s']:.0f}",
                    f"{entry['speedup']:.2f}" if entry["speedup"] else "-",
                    f"{variant['bound']:.1f}" if variant["bound"] else "-",
                    _ms(entry["p50_s"]),
                    _ms(entry["p95_s"]),
                    _ms(entry["p99_s"]),
                    "-" if cpu is None else f"{cpu * 100:.0f}",
                    str(sum(entry["failures"].values())),
                    note,
                )
            table.add_section()
    return table


def rate_table(document: dict[str, Any]) -> Table | None:
    rows = _with_scenario(document, "rate")
    if not rows:
        return None
    table = Table(
        title="Constant arrival rate: latency from the scheduled send (and from the actual send)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "target",
        "rate/s",
        "sent",
        "late",
        "dropped",
        "done/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "send p99 ms",
        "fails",
    ):
        table.add_column(column, justify="left" if column == "target" else "right")
    for name, r in rows:
        scheduled, service = r["latency_from_schedule_s"], r["service_latency_s"]
        table.add_row(
            name,
            f"{r['params']['per_s']:g}",
            str(r["scheduled"]),
            str(r["late_sends"]),
            str(r["dropped"]),
            f"{r['achieved_per_s']:.1f}",
            *(_ms(scheduled.get(k)) for k in ("p50", "p99", "p99.9", "max")),
            _ms(service.get("p99")),
            str(sum(r["failures"].values())),
        )
    return table


def metrics_table(document: dict[str, Any]) -> Table | None:
    table = Table(
        title="Requests counted by the server (/metrics) vs sent", box=box.SIMPLE_HEAD, title_justify="left"
    )
    for column in ("target", "endpoint", "sent", "counted", "by status", "kernel iterations", "match"):
        table.add_column(column)
    for target in document["targets"]:
        for endpoint in target["endpoints"]:
            for m in endpoint["metrics"]:
                table.add_row(
                    target["name"],
                    endpoint["name"],
                    str(m["sent"]),
                    f"{m['counted']:g}",
                    ", ".join(f"{s}: {c:g}" for s, c in sorted(m["by_status"].items())),
                    f"{m['kernel_iterations']:g}",
                    "yes" if m["matches"] else "NO",
                )
    return table


PLAIN_WIDTH = 140  # kubectl logs and files: wide enough that no column is cut


def make_console() -> Console:
    """A terminal gets colour and its own width; anything else plain text at a fixed width."""
    console = Console()
    return console if console.is_terminal else Console(width=PLAIN_WIDTH)


def print_summary(document: dict[str, Any], console: Console) -> None:
    run = document["run"]
    console.print(
        f"\nconcurrency-lab run {run['id']} ({run['status']}), N = {run['settings']['work_seconds']:g} s",
        highlight=False,
    )
    for build in (
        census_table,
        calibration_table,
        bursts_table,
        metrics_table,
        closed_table,
        ramp_table,
        sweep_table,
        rate_table,
    ):
        table = build(document)
        if table is not None and table.row_count:
            console.print(table)
    console.print("Findings:", highlight=False)
    for finding in document["findings"]:
        marker = {"failure": "FAILED", "departure": "model departs", "shape": "-"}[finding["kind"]]
        console.print(
            f"  {marker} {finding['text']}" if marker != "-" else f"  - {finding['text']}",
            highlight=False,
            markup=False,
        )
    if document["missing"]:
        console.print("Not measured:", highlight=False)
        for item in document["missing"]:
            console.print(f"  - {item}", highlight=False, markup=False)
    verdict = (
        "FAILED checks: " + str(len(document["failed_checks"]))
        if document["failed_checks"]
        else "all checks passed"
    )
    console.print(verdict, highlight=False)
