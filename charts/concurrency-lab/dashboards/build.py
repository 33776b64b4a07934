"""The lab's Grafana dashboard as code: `python charts/concurrency-lab/dashboards/build.py`.

Writes lab.json next to this file; the chart embeds it in a ConfigMap. Every query reads the
metric contract of services/workload/metrics.py and groups by the `target` label that the chart's
scrape config gives each target. `--check` exits 1 when lab.json is not what this file builds.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from grafana_foundation_sdk.builders.common import VizLegendOptions, VizTooltipOptions
from grafana_foundation_sdk.builders.dashboard import Dashboard, Row
from grafana_foundation_sdk.builders.prometheus import Dataquery
from grafana_foundation_sdk.builders.timeseries import Panel
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.common import (
    LegendDisplayMode,
    LegendPlacement,
    SortOrder,
    TooltipDisplayMode,
)
from grafana_foundation_sdk.models.dashboard import DashboardCursorSync, DataSourceRef

OUTPUT = Path(__file__).with_name("lab.json")
# The datasource the chart provisions (templates/_helpers.tpl, grafanaProvisioning).
PROMETHEUS = DataSourceRef(type_val="prometheus", uid="prometheus")
# Probes and scrapes also hit the targets; latency is about the workload endpoints only.
WORKLOAD_ROUTES = 'route=~"/test/.+"'
RATE = "[$__rate_interval]"
PANEL_HEIGHT = 8


def query(expr: str, legend: str, ref_id: str = "A") -> Dataquery:
    return Dataquery().expr(expr).legend_format(legend).ref_id(ref_id).datasource(PROMETHEUS)


def timeseries(title: str, description: str, unit: str, width: int, *queries: Dataquery) -> Panel:
    panel = (
        Panel()
        .title(title)
        .description(description)
        .datasource(PROMETHEUS)
        .unit(unit)
        .min(0)
        .height(PANEL_HEIGHT)
        .span(width)
        .legend(
            VizLegendOptions()
            .show_legend(True)
            .display_mode(LegendDisplayMode.LIST)
            .placement(LegendPlacement.BOTTOM)
        )
        # Every series at the hovered time, largest first: targets compare at a glance.
        .tooltip(VizTooltipOptions().mode(TooltipDisplayMode.MULTI).sort(SortOrder.DESCENDING))
    )
    for target in queries:
        panel = panel.with_target(target)
    return panel


def latency_quantile(quantile: float, ref_id: str) -> Dataquery:
    buckets = f"rate(lab_http_request_duration_seconds_bucket{{{WORKLOAD_ROUTES}}}{RATE})"
    label = f"p{round(quantile * 100)}"
    return query(
        f"histogram_quantile({quantile}, sum by (target, le) ({buckets}))", f"{{{{target}}}} {label}", ref_id
    )


def sections() -> list[tuple[str, list[Panel]]]:
    """Rows of panels, top to bottom."""
    traffic = [
        timeseries(
            "Requests/s by target and route",
            "Answered requests per second, probes and scrapes included.",
            "reqps",
            12,
            query(f"sum by (target, route) (rate(lab_http_requests_total{RATE}))", "{{target}} {{route}}"),
        ),
        timeseries(
            "Errors by status",
            "4xx and 5xx answers per second (422: input the contract refuses).",
            "reqps",
            12,
            query(
                f'sum by (target, status) (rate(lab_http_requests_total{{status=~"[45].."}}{RATE}))',
                "{{target}} {{status}}",
            ),
        ),
    ]
    concurrency = [
        timeseries(
            "Latency p50 / p95 / p99 by target",
            "Server-side time of workload requests (/test/...), from the duration histogram.",
            "s",
            12,
            latency_quantile(0.5, "A"),
            latency_quantile(0.95, "B"),
            latency_quantile(0.99, "C"),
        ),
        timeseries(
            "Requests in flight by target",
            "Requests being handled at scrape time (the scrape itself counts as one).",
            "short",
            12,
            query("sum by (target) (lab_http_requests_in_flight)", "{{target}}"),
        ),
    ]
    resources = [
        timeseries(
            "Processes by target and role",
            "The server's process tree by role (arbiter, worker, reloader, pool...).",
            "short",
            8,
            query("sum by (target, role) (lab_server_processes)", "{{target}} {{role}}"),
        ),
        timeseries(
            "Threads by target",
            "Threads in the server's process tree.",
            "short",
            8,
            query("sum by (target) (lab_server_threads)", "{{target}}"),
        ),
        timeseries(
            "CPU use by target",
            "CPU seconds per second (cores busy) of the server's live processes.",
            "short",
            8,
            query(f"sum by (target) (rate(lab_server_cpu_seconds_total{RATE}))", "{{target}}"),
        ),
        timeseries(
            "Resident memory by target",
            "Resident memory of the server's process tree.",
            "bytes",
            8,
            query("sum by (target) (lab_server_resident_memory_bytes)", "{{target}}"),
        ),
        timeseries(
            "Kernel iterations/s by target",
            "CPU work completed: iterations of the workload kernel per second.",
            "short",
            8,
            query(f"sum by (target) (rate(lab_kernel_iterations_total{RATE}))", "{{target}}"),
        ),
        timeseries(
            "CPU throttling by target",
            "From the target's cgroup cpu.stat: seconds per second its CPU quota held it stopped, and "
            "quota periods per second in which it was (none without a quota, absent without a cgroup).",
            "short",
            8,
            query(
                f"sum by (target) (rate(lab_cgroup_cpu_throttled_seconds_total{RATE}))",
                "{{target}} throttled s/s",
            ),
            query(
                f"sum by (target) (rate(lab_cgroup_cpu_throttled_periods_total{RATE}))",
                "{{target}} throttled periods/s",
                "B",
            ),
        ),
    ]
    return [
        ("Traffic", traffic),
        ("Latency and concurrency", concurrency),
        ("Processes and resources", resources),
    ]


def build_dashboard() -> Dashboard:
    dashboard = (
        Dashboard("concurrency-lab")
        .uid("concurrency-lab")
        .description("Python web servers under concurrent load: one series per target (the chart's list).")
        .tags(["concurrency-lab", "generated"])
        .readonly()
        .tooltip(DashboardCursorSync.CROSSHAIR)
        .refresh("5s")
        .time("now-30m", "now")
        .timezone("browser")
    )
    # Explicit, stable panel ids: Grafana keys panel links and state by them.
    panel_ids = itertools.count(1)
    for title, panels in sections():
        dashboard = dashboard.with_row(Row(title).id(next(panel_ids)))
        for panel in panels:
            dashboard = dashboard.with_panel(panel.id(next(panel_ids)))
    return dashboard


def render() -> str:
    """The dashboard as the JSON text committed in lab.json (stable key order, final newline)."""
    return json.dumps(build_dashboard().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT} is stale: run python {Path(__file__).as_posix()}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
