"""Findings: what a run showed, in plain words, each of one kind.

- shape: what the measurement shows (served one at a time, n at once) and why, from the target's
  own configuration;
- interference: the machine took CPU the model allowed the target (steal, other processes, cgroup
  throttling), named with the share it cost; never blamed on the server;
- departure: what measured work and measured share cannot explain, with the assumption that failed;
- noise: a check missed inside the noise the machine itself showed (said with its size, not failed);
- answer: what a team's app answered on one of its paths that is not a success (a 404, a 500 from
  an app that raised), with its counts: the app's doing, measured and reported like the rest, so
  the run measures what else it can and does not fail for it;
- failure: the lab's or a target's fault (a target not ready or dying, failed requests, counts
  that do not match, a calibration miss beyond the noise); only these make a run exit non-zero.

shape.py classifies, cause.py explains from config and machine, wording.py says it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

FindingKind = Literal["shape", "interference", "departure", "noise", "answer", "failure"]


class Finding(BaseModel):
    kind: FindingKind
    text: str
    target: str | None = None
    subject: str | None = None  # the endpoint or load shape it is about
