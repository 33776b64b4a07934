"""Flow: the seed study's workload. Users ramped Locust-style against `fan-out` (k parallel waits,
then one HTTP call to the downstream mock), measured against the lab's own Little's-law prediction,
and the ASGI/WSGI ratio set beside the study's published one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from rich.table import Table

from labtester import census, machine
from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.info import TargetInfo
from labtester.loadclient import LoadClient
from labtester.rawlog import Record
from labtester.scenarios.common import SampleShape, encode, join_users, ramp_users
from labtester.scenarios.flow import answers, report
from labtester.scenarios.flow.analyse import FAN_OUT, FlowSettings, FlowSummary, summarize
from labtester.scenarios.together import Together
from labtester.views import Answer, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


class Flow(SampleShape[FlowSettings, FlowSummary]):
    name = "flow"
    settings_model = FlowSettings
    summary_model = FlowSummary

    def applies(self, info: TargetInfo) -> bool:
        return FAN_OUT in info.endpoints

    async def measure(
        self,
        url: str,
        settings: FlowSettings,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
    ) -> list[Record]:
        """Client 0 times requests alone (R) and reads the server's CPU and the machine around the
        ramp; the users are dealt across the clients, each started at its planned time."""
        together = together or Together()
        path, census_url = f"{info.endpoints[FAN_OUT].path}?{settings.query()}", url + info.control.census
        leader: dict[str, Any] = {}
        async with (
            LoadClient(url, timeout_s, together.crew.index) as client,
            httpx.AsyncClient(timeout=60) as control,
        ):
            if together.leader:
                leader["baseline"] = encode([await client.get(path) for _ in range(settings.baseline)])
                cpu_before = await census.cpu_seconds(control, census_url)
                machine_before = machine.snapshot()
            meter = together.go(client, "flow")
            samples, users = await ramp_users(
                client,
                path,
                settings.users,
                settings.spawn_rate,
                settings.duration_s,
                settings.think_s,
                together.crew,
            )
            wall_s = client.now()
            shared = together.done("flow", client, samples, meter)
            if together.leader:
                leader["machine"] = machine.recorded(machine_before, machine.snapshot())
                cpu_after = await census.cpu_seconds(control, census_url)
                leader["server_cpu_s"] = (
                    None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
                )
        record = {
            "params": settings.model_dump(),
            "wall_s": wall_s,
            "users": users,
            "samples": encode(samples),
        }
        return [{"step": "flow", **record, **leader, **shared}]

    def join(self, records: list[Record]) -> Record:
        return join_users(records)

    def summarize(self, records: list[Record], info: TargetInfo | None) -> FlowSummary:
        return summarize(records, info)

    def findings(self, summary: FlowSummary, target: TargetResult) -> list[Finding]:
        text = f"{label(target.name, target.info)}: {report.target_text(target, summary)}"
        return [Finding(kind="shape", target=target.name, subject=self.name, text=text)]

    def across(self, results: Results) -> list[Finding]:
        text = report.comparison(results)
        return [Finding(kind="shape", subject=self.name, text=text)] if text else []

    def tables(self, results: Results) -> list[Table]:
        return [report.table(results)]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        plot = report.plot(results, directory / "flow-over-time.png")
        return [plot] if plot else []

    def answers(self, results: Results) -> list[Answer]:
        found = answers.answer(results)
        return [found] if found else []

    def comparison(self, results: Results) -> list[ComparisonRow]:
        return answers.comparison(results)


SHAPE = Flow()
