"""Sweep: closed loops at rising concurrency on the mixed endpoint, for each workload variant.

Speedup over concurrency 1 is set beside the bound of the gevent study, 1 / (1 - p) with
p = io / (cpu + io) per core that runs the CPU parts (model.speedup_bound). The report marks the
concurrency where p99 latency starts to degrade: the first level from which p99 stays above
DEGRADED times the p99 at the lowest level (at every higher level too, so one noisy spike does
not count). Beside it stands what the study's rule recommends for gunicorn's worker_connections:
network time / CPU time, io / cpu. Variants with the same cpu and io but more `splits` show what
cutting the wait into parts does: each part's end waits for the CPU parts of other requests.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from labtester import census
from labtester.clients.crew import Crew
from labtester.control import async_control_client
from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.common import SampleShape
from labtester.scenarios.step import released
from labtester.scenarios.sweep import answers, report
from labtester.scenarios.sweep.analyse import SweepSettings, SweepSummary, summarize
from labtester.scenarios.together import Together
from labtester.views import Answer, ComparisonRow

if TYPE_CHECKING:
    from labtester.results import Results, TargetResult


async def level(
    client: LoadClient, path: str, concurrency: int, duration_s: float, crew: Crew | None = None
) -> list[Sample]:
    """`concurrency` workers in a closed loop until `duration_s` has passed; with a crew, this
    client's part of them."""
    samples: list[Sample] = []
    stop_at = client.now() + duration_s

    async def worker() -> None:
        while client.now() < stop_at:
            samples.append(await client.get(path))

    await asyncio.gather(*(worker() for _ in range((crew or Crew()).part(concurrency))))
    return samples


class Sweep(SampleShape[SweepSettings, SweepSummary]):
    name = "sweep"
    settings_model = SweepSettings
    summary_model = SweepSummary

    def applies(self, info: TargetInfo) -> bool:
        return "mixed" in info.endpoints

    async def measure(
        self,
        url: str,
        settings: SweepSettings,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
    ) -> list[Record]:
        """One record per variant and level: every level of a variant, then the next variant. Each
        level is a release of every client's part of its workers; client 0 reads the server's CPU."""
        together = together or Together()
        records = []
        mixed, census_url = info.endpoints["mixed"], url + info.control.census
        async with (
            LoadClient(url, timeout_s, together.crew.index) as client,
            async_control_client(60) as control,
        ):
            for variant in settings.variants:
                path = f"{mixed.path}?{variant.query()}"
                for concurrency in settings.levels:
                    step = f"{variant.query()} c={concurrency}"
                    cpu_before = await census.cpu_seconds(control, census_url) if together.leader else None
                    async with released(client, together, step) as load:
                        load.samples = await level(
                            client, path, concurrency, settings.duration_s, together.crew
                        )
                    cpu_after = await census.cpu_seconds(control, census_url) if together.leader else None
                    records.append(
                        {
                            "step": step,
                            "params": {**variant.model_dump(), "duration_s": settings.duration_s},
                            "variant": variant.query(),
                            "concurrency": concurrency,
                            "server_cpu_s": None
                            if cpu_before is None or cpu_after is None
                            else cpu_after - cpu_before,
                            **load.fields(),
                        }
                    )
        return records

    def summarize(self, records: list[Record], info: TargetInfo | None) -> SweepSummary:
        return summarize(records, info)

    def findings(self, summary: SweepSummary, target: TargetResult) -> list[Finding]:
        name = label(target.name, target.info)
        return [
            *(
                Finding(kind="shape", target=target.name, subject=self.name, text=f"{name}: {t}")
                for t in report.shape_texts(summary)
            ),
            *(
                Finding(kind="departure", target=target.name, subject=self.name, text=f"{name}: {t}")
                for t in report.departure_texts(summary)
            ),
        ]

    def tables(self, results: Results) -> list[Table]:
        return [report.table(results)]

    def plots(self, results: Results, records: list[Record], directory: Path) -> list[Path]:
        plot = report.plot(results, directory / "sweep.png")
        return [plot] if plot else []

    def answers(self, results: Results) -> list[Answer]:
        found = answers.answer(results)
        return [found] if found else []

    def comparison(self, results: Results) -> list[ComparisonRow]:
        return answers.comparison(results)


SHAPE = Sweep()
