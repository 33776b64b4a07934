"""Flow: the seed study's workload. Users ramped Locust-style against `fan-out` (k parallel waits,
then one HTTP call to the downstream mock), or against each path of a team's app, measured against
the lab's own Little's-law prediction; the ASGI/WSGI ratio set beside the study's published one,
and for an app, what each path costs and which configuration serves it best."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from labtester.cold import warm
from labtester.control import async_control_client
from labtester.findings import Finding
from labtester.findings.answered import Counts, app_answers
from labtester.findings.wording import label
from labtester.info import EndpointInfo, TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.base import ShapeContext
from labtester.scenarios.common import SampleShape, always, encode, join_users, ramp_users
from labtester.scenarios.flow import accounting, advice, answers, mix, report, servingcost
from labtester.scenarios.flow.analyse import (
    FlowSummary,
    flow_endpoints,
    flows,
    summarize,
)
from labtester.scenarios.flow.conclude import AppConclusion, app_conclusion
from labtester.scenarios.flow.cost import PathAccount
from labtester.scenarios.flow.settings import FAN_OUT, FlowSettings
from labtester.scenarios.step import one_step, released
from labtester.scenarios.together import RequestCounter, Together
from labtester.traffic import Outgoing, Traffic
from labtester.views import Answer, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult
    from labtester.settings import LabSettings


class Flow(SampleShape[FlowSettings, FlowSummary]):
    name = "flow"
    settings_model = FlowSettings
    summary_model = FlowSummary
    conclusion_model = AppConclusion

    def applies(self, info: TargetInfo) -> bool:
        return FAN_OUT in info.endpoints or any(e.work == "app" for e in info.endpoints.values())

    def plan(self, info: TargetInfo, settings: LabSettings) -> list[str]:
        mix = ["flow on the mix"] if _mixed(info, settings) else []
        return [f"flow on {e.name}" for e in flow_endpoints(info, settings.planned_endpoints(info))] + mix

    def run(self, ctx: ShapeContext) -> None:
        """Each path (a team's request) in turn, then a team's whole mix; with P clients, each sends
        its part of the users of every step, and client 0 counts what the server counted of the
        step against every client's sends."""
        settings = self.settings(ctx.settings)
        together = Together(ctx)
        endpoints = flow_endpoints(ctx.info, ctx.settings.planned_endpoints(ctx.info))
        if ctx.crew.leader and any(e.work == "app" for e in endpoints):
            # A team's app: the configuration's own cost per request, before its flows (client 0
            # alone; the others wait for it at the first path's meeting).
            ctx.progress.step(f"{ctx.target.name}: flow serving cost (empty requests)")
            cost = asyncio.run(
                servingcost.measure(ctx.target.url, ctx.info, settings.users, ctx.settings.request_timeout_s)
            )
            ctx.record("cost", step=servingcost.COST_STEP, **cost)
        for endpoint in endpoints:
            ctx.progress.step(f"{ctx.target.name}: flow on {endpoint.name}")
            step = f"flow {endpoint.name}"
            counter = RequestCounter(ctx) if ctx.crew.leader else None
            request = ctx.settings.outgoing(endpoint.name)
            record = asyncio.run(
                self.measure_path(
                    ctx.target.url,
                    endpoint,
                    settings,
                    ctx.settings.request_timeout_s,
                    ctx.info,
                    together,
                    request,
                )
            )
            if record is not None:
                ctx.record("run", step=step, endpoint=endpoint.name, **record)
            if counter is not None:
                counter.record(step)
                ctx.check_alive(together.errors)
        traffic = ctx.settings.app_traffic()
        if traffic is not None and _mixed(ctx.info, ctx.settings):
            ctx.progress.step(f"{ctx.target.name}: flow on the mix")
            counter = RequestCounter(ctx) if ctx.crew.leader else None
            record = asyncio.run(self.measure_mix(ctx.target.url, traffic, settings, ctx.settings, together))
            if record is not None:
                ctx.record("run", step=mix.MIX_STEP, endpoint=mix.ALL, **record)
            if counter is not None:
                counter.record(mix.MIX_STEP)
                ctx.check_alive(together.errors)

    async def measure_mix(
        self, url: str, traffic: Traffic, settings: FlowSettings, lab: LabSettings, together: Together
    ) -> Record | None:
        """Users ramped against the whole mix, each picking by weight; None: this client sent nothing."""
        async with one_step(url, lab.request_timeout_s, together, mix.MIX_STEP) as (client, _, load):
            load.samples, users = await mix.measure_mix(client, traffic, settings, together)
        if not load.samples and not together.leader:
            return None
        return {**mix.mix_record(settings, traffic, users), **load.fields()}

    async def measure(
        self,
        url: str,
        settings: FlowSettings,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
    ) -> list[Record]:
        found = await self.measure_path(url, info.endpoints[FAN_OUT], settings, timeout_s, info, together)
        return [found] if found is not None else []

    async def measure_path(
        self,
        url: str,
        endpoint: EndpointInfo,
        settings: FlowSettings,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
        request: Outgoing | None = None,
    ) -> Record | None:
        """Users ramped against one path, after a few requests alone (R, and what one costs), which
        client 0 times, reading the server's CPU and the machine around the ramp; the users are
        dealt across the clients, each started at its planned time. `request`: a team's (its
        method, headers and body); None: a GET of the path. None: this client sent nothing."""
        together = together or Together()
        request = request or Outgoing.get(settings.path(endpoint))
        step, leader = f"flow {endpoint.name}", together.leader
        async with (
            LoadClient(url, timeout_s, together.crew.index) as client,
            async_control_client(60) as control,
        ):
            alone = await _alone(client, request, settings.baseline) if leader else []
            # A path that only errs is not loaded: its answers are the result (client 0 tells all).
            erring = leader and endpoint.work == "app" and not any(sample.ok for sample in alone)
            if together.agree(f"{step} alone", {"unloaded": erring})[0]["unloaded"]:
                return _unloaded(settings, alone) if leader else None
            around = accounting.Around(control, url, info)
            if leader:
                await around.start()
            async with released(client, together, step) as load:
                load.samples, users = await ramp_users(
                    client,
                    always(request),
                    settings.users,
                    settings.spawn_rate,
                    settings.duration_s,
                    settings.think_s,
                    together.crew,
                )
            measured: dict[str, Any] = {}
            if leader:
                measured = {**await around.end(), "baseline": encode(alone)}
        return {"params": settings.model_dump(), "users": users, **load.fields(), **measured}

    def join(self, records: list[Record]) -> Record:
        return join_users(records)

    def summarize(self, records: list[Record], info: TargetInfo | None) -> FlowSummary:
        return summarize(records, info)

    def analyse(self, records: list[Record], info: TargetInfo | None, settings: LabSettings) -> FlowSummary:
        """The flows and, for a team's app, the serving cost measured before them."""
        return summarize([r for r in records if r.get("kind", "run") in ("run", "cost")], info)

    def missing(self, summary: FlowSummary | None, info: TargetInfo, settings: LabSettings) -> list[str]:
        ran = {flow.endpoint for flow in summary.flows} if summary else set()
        planned = flow_endpoints(info, settings.planned_endpoints(info))
        mixed = _mixed(info, settings) and (summary is None or summary.mix is None)
        return [f"{e.name}: not run" for e in planned if e.name not in ran] + (
            ["the mix: not run"] if mixed else []
        )

    def findings(self, summary: FlowSummary, target: TargetResult) -> list[Finding]:
        return [
            Finding(
                kind="shape",
                target=target.name,
                subject=self.name,
                text=f"{label(target.name, target.info)}: {report.target_text(target, flow)}",
            )
            for flow in summary.flows
        ]

    def across(self, results: Results) -> list[Finding]:
        text = report.comparison(results)
        found = [Finding(kind="shape", subject=self.name, text=text)] if text else []
        counts: dict[str, Counts] = {}
        for target, flow in flows(results):
            if flow.endpoint != FAN_OUT:
                counts.setdefault(flow.endpoint, []).append((target.name, flow.requests, flow.failures))
        answered = [app_answers(path, "flow", per_target) for path, per_target in counts.items()]
        low: dict[str, list[tuple[str, PathAccount]]] = {}
        for target, flow in flows(results):
            if flow.account is not None and flow.account.lower_bound:
                low.setdefault(flow.endpoint, []).append((target.name, flow.account))
        unaccounted = [accounting.lower_bound_finding(path, where) for path, where in low.items()]
        return found + [finding for finding in answered if finding is not None] + unaccounted

    def tables(self, results: Results) -> list[Table]:
        return [report.table(results)]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        plot = report.plot(results, directory / "flow-over-time.png")
        return [plot] if plot else []

    def conclude(self, results: Results) -> AppConclusion | None:
        return app_conclusion(results)

    def answers(self, results: Results) -> list[Answer]:
        found = answers.answer(results)
        app = advice.answers(results)
        mixes = [(t.name, s.mix) for t, s in results.summaries(FlowSummary) if s.mix is not None]
        on_mix = mix.answer(mixes, order=1 + len(app))
        return app + ([on_mix] if on_mix else []) + ([found] if found else [])

    def comparison(self, results: Results) -> list[ComparisonRow]:
        return answers.comparison(results)


def _mixed(info: TargetInfo, settings: LabSettings) -> bool:
    """A team's traffic of more than one request, each of them served here: its mix is run too."""
    traffic = settings.app_traffic()
    return (
        traffic is not None
        and len(traffic.requests) > 1
        and all(request.label in info.endpoints for request in traffic.requests)
    )


COLD_MOST = 16  # more requests alone at most, for processes' first ones (a server of many may deal each one)


async def _alone(client: LoadClient, request: Outgoing, count: int) -> list[Sample]:
    """`count` requests alone, one after another, beyond each process's first of them (cold.py: those
    pay the path's one-time costs), at most COLD_MOST more for those."""
    alone: list[Sample] = []
    while len(warm(alone)) < count and len(alone) < count + COLD_MOST:
        alone.append(await client.send(request))
    return alone


def _unloaded(settings: FlowSettings, alone: list[Sample]) -> Record:
    """A path none of whose requests alone succeeded: not loaded, its answers kept as its samples."""
    return {
        "params": settings.model_dump(),
        "baseline": encode(alone),
        "wall_s": 0.0,
        "users": [],
        "server_cpu_s": None,
        "samples": encode(alone),
        "unloaded": True,
    }


SHAPE = Flow()
