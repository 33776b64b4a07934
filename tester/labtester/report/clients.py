"""The report's part on the clients: what each spent on each load shape (CPU per request, the most
of its core it used and of a step it waited for one, whether it was at its limit), how tight the
release was across them, by the servers' own start times, beside one client's own, and how far
their clocks were from client 0's."""

from __future__ import annotations

import numpy as np
from rich import box
from rich.table import Table

from labtester.clients.clock import skew_text
from labtester.results import Results
from labtester.scenarios.bursts.analyse import BurstRun, BurstsSummary
from labtester.views import Section


def _p(values: list[float], q: float) -> str:
    return f"{np.percentile(values, q) * 1000:.2f}" if values else "-"


def io_bursts(results: Results) -> list[BurstRun]:
    """The I/O bursts: where the release alone sets the spread of the starts."""
    return [
        run
        for _, summary in results.summaries(BurstsSummary)
        for endpoint in summary.endpoints
        if endpoint.work == "io"
        for point in endpoint.points
        for run in point.runs
    ]


def release_text(results: Results) -> str:
    """The spread of the starts the server took at once: across clients, and within one."""
    runs = io_bursts(results)
    across = [r.client_spread_s for r in runs if r.client_spread_s is not None]
    alone = [r.own_spread_s for r in runs if r.own_spread_s is not None]
    clients = results.run.clients
    clocks = skew_text(results.run.clocks)
    if not across and not alone:
        return clocks
    text = (
        f"The release, by the servers' own start times (I/O bursts): one client's own starts the "
        f"server took at once spread p50/p95 {_p(alone, 50)}/{_p(alone, 95)} ms."
    )
    if across:
        text += (
            f" Across the {clients} clients, each client's first start spread p50/p95 "
            f"{_p(across, 50)}/{_p(across, 95)} ms ({len(across)} bursts)."
        )
    return f"{text} {clocks}".strip()


def clients_table(results: Results) -> Table:
    table = Table(
        title="Clients: what each spent on each load shape (its sending thread's CPU time, the most of its "
        "core it used, the most of a step it waited on a run queue for a core)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    columns = (
        "target",
        "shape",
        "client",
        "requests",
        "CPU ms/request",
        "core used %",
        "waited %",
        "at its limit",
    )
    for column in columns:
        table.add_column(column, justify="left" if column in ("target", "shape") else "right")
    for target in results.targets:
        for use in target.clients:
            per_request = use.cpu_per_request_s
            table.add_row(
                target.name,
                use.shape,
                str(use.client),
                str(use.requests),
                "-" if per_request is None else f"{per_request * 1000:.2f}",
                "-" if use.core_share is None else f"{use.core_share * 100:.0f}",
                "-" if use.waiting_share is None else f"{use.waiting_share * 100:.0f}",
                "yes" if use.saturated else "no",
            )
    return table


def clients_section(results: Results) -> Section:
    return Section(
        id="clients",
        title=f"Clients ({results.run.clients})",
        tables=[clients_table(results)],
        text=release_text(results),
    )
