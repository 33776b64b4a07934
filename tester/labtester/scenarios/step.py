"""One step of load by this client, with the many-clients preamble written once for every shape:
the release (every client's connections ready; this client's clock starts there), the shape's own
load, and the meeting after every client's last answer; then what every shape records of it. A
shape measured in one step (closed, ramp, rate) says only how it sends its load (OneStepShape)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Generic

from labtester.info import TargetInfo
from labtester.load import LoadClient, Sample
from labtester.rawlog import Record
from labtester.scenarios.base import SettingsT, SummaryT
from labtester.scenarios.common import SampleShape, encode
from labtester.scenarios.together import Together


@dataclass
class Released:
    """One step of load by this client, from the release to the meeting after every client's last
    answer; the shape's load sets its `samples`."""

    samples: list[Sample] = field(default_factory=list)
    wall_s: float = 0.0
    shared: Record = field(default_factory=dict)  # where this client's clock started, what it spent

    def fields(self) -> Record:
        """What every shape records of the step: its samples on this client's clock, the wall time
        and what this client spent."""
        return {"wall_s": self.wall_s, "samples": encode(self.samples), **self.shared}


@asynccontextmanager
async def released(client: LoadClient, together: Together, step: str) -> AsyncIterator[Released]:
    """The many-clients preamble of a step, written once: the release (every client's connections
    ready; this client's clock starts there), the shape's load, then the meeting after the last."""
    meter = together.go(client, step)
    load = Released()
    yield load
    load.wall_s = client.now()
    load.shared = together.done(step, client, load.samples, meter)


@asynccontextmanager
async def one_step(
    url: str, timeout_s: float, together: Together | None, step: str
) -> AsyncIterator[tuple[LoadClient, Together, Released]]:
    """A shape measured in one step: this client's connections to `url` and the step released
    (alone, with no crew: at once)."""
    together = together or Together()
    async with (
        LoadClient(url, timeout_s, together.crew.index) as client,
        released(client, together, step) as load,
    ):
        yield client, together, load


class OneStepShape(SampleShape[SettingsT, SummaryT], Generic[SettingsT, SummaryT]):
    """A shape measured in one step named after it: it says only how this client sends its part."""

    @abstractmethod
    async def send(
        self, client: LoadClient, settings: SettingsT, together: Together
    ) -> tuple[list[Sample], Record]:
        """This client's part of the step's load: its samples, and what the shape records beside them."""

    async def measure(
        self,
        url: str,
        settings: SettingsT,
        timeout_s: float,
        info: TargetInfo,
        together: Together | None = None,
    ) -> list[Record]:
        async with one_step(url, timeout_s, together, self.name) as (client, together, load):
            load.samples, recorded = await self.send(client, settings, together)
        return [{"step": self.name, "params": settings.model_dump(), **recorded, **load.fields()}]
