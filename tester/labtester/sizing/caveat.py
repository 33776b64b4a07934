"""What a sizing's answer says beside its figures (results.json's `caveats`): of one configuration
(`about`, its label) or of the whole sizing, and of what kind, so that a re-sizing drops its first
search's own and the answer says one that several configurations share once, without reading the
words back."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

# Where the model cannot hold for one configuration (`model`); what the sizing assumed (`assumed`:
# an input not measured, a pod other than this machine); no rate keeping the objective (`no-rate`);
# a target rate no configuration in the pod serves (`not-served`), or serves but none keeps over
# minutes of it (`not-held`).
Kind = Literal["model", "assumed", "no-rate", "not-served", "not-held"]
RATE_KINDS: tuple[Kind, ...] = ("not-served", "not-held")  # a search's own: another says its own
# No rate's predicted p99 keeps the objective (its slowest requests' CPU alone takes more): proved
# at the proposal's rates, side by side.
NO_RATE = "no rate keeps the objective in the model"
NOT_SERVED = "no configuration within the pod serves"
NOT_HELD = "keeps it over minutes of that rate in the model"
# A caveat of one configuration as schema 6 wrote it: its label (families.Family.label), then the text.
_LABELLED = re.compile(r"(?P<about>[^:]+?, \d+ workers?(?: x \d+ \w+)?): (?P<text>.*)", re.DOTALL)


class Caveat(BaseModel):
    model_config = ConfigDict(frozen=True)  # said once however many configurations carry it

    text: str
    kind: Kind = "assumed"
    about: str | None = None  # the configuration's label; None: the whole sizing

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: object) -> object:
        """A sentence, as schema 6 wrote each (a results.json, a run's raw plan, a proposal file):
        its kind and configuration read from its words, once, here."""
        if not isinstance(data, str):
            return data
        if data.startswith(NOT_SERVED):
            return {"text": data, "kind": "not-served"}
        if NOT_HELD in data:
            return {"text": data, "kind": "not-held"}
        if data.startswith(NO_RATE):
            return {"text": data, "kind": "no-rate"}
        if labelled := _LABELLED.fullmatch(data):
            return {"text": labelled["text"], "kind": "model", "about": labelled["about"]}
        return {"text": data}

    def said(self) -> str:
        """`granian-wsgi, 2 workers x 8 threads: each worker accepts ...`, or the text alone."""
        return f"{self.about}: {self.text}" if self.about else self.text
