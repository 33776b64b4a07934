"""What a sizing's answer says beside its figures (results.json's `caveats`): of one configuration
(`about`, its label) or of the whole sizing, and of what kind, so that a re-sizing drops its first
search's own and the answer says one that several configurations share once, without reading the
words back."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

# Where the model cannot hold for one configuration (`model`); what the sizing assumed (`assumed`:
# an input not measured, a pod other than this machine); no rate keeping the objective (`no-rate`);
# a target rate no configuration in the pod serves (`not-served`), or serves but none keeps over
# minutes of it (`not-held`).
Kind = Literal["model", "assumed", "no-rate", "not-served", "not-held"]
RATE_KINDS: tuple[Kind, ...] = ("not-served", "not-held")  # a search's own: another says its own


class Caveat(BaseModel):
    model_config = ConfigDict(frozen=True)  # said once however many configurations carry it

    text: str
    kind: Kind = "assumed"
    about: str | None = None  # the configuration's label; None: the whole sizing

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: object) -> object:
        """A results.json written before caveats had fields: each a sentence, taken as assumed."""
        return {"text": data} if isinstance(data, str) else data

    def said(self) -> str:
        """`granian-wsgi, 2 workers x 8 threads: each worker accepts ...`, or the text alone."""
        return f"{self.about}: {self.text}" if self.about else self.text
