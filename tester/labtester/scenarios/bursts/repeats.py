"""When a burst's repeats agree enough to stop, as pyperf stops once its runs agree.

A point is judged by its ratio: each repeat's makespan over the model of that repeat's own
measured work, the median over its R repeats (departures and answers read it). Once a majority of
them (R // 2 + 1: 2 of 3) agree, the median of all R lies between the lowest and the highest of that
majority whatever the others would measure; so when those agree within the stability band, the rest
could move the figure by no more than the band, and the lab stops there. Repeats that disagree (a
neighbour took a core, a request failed) go on to R, and the median sets the odd one aside.

The ratio, not the raw makespan: on a shared machine the same calibrated work takes 10-30 % more or
less CPU from one repeat to the next, and the OS hands a burst's connections to workers differently
each time; both move the makespan and its model together. Measured on a default `make lab`: 22 of 90
points went to a third repeat on makespans, 18 of them with ratios that already agreed within 4 %.
"""

from __future__ import annotations

from collections.abc import Sequence

from labtester.stability import UNSTABLE_CV_PCT
from labtester.stats import spread

# pyperf's stability band: the spread (max - min) / median a majority of repeats may show.
REPEAT_AGREEMENT = UNSTABLE_CV_PCT / 100


def majority(repeats: int) -> int:
    """The fewest of `repeats` whose agreement bounds the median of all of them."""
    return repeats // 2 + 1


def enough(ratios: Sequence[float | None], repeats: int) -> bool:
    """Whether the repeats measured so far settle the point: all R of them, or a majority whose
    measured/model ratios (None: a repeat with a failed request) agree within REPEAT_AGREEMENT."""
    if len(ratios) >= repeats:
        return True
    measured = [m for m in ratios if m is not None]
    if len(measured) < len(ratios) or len(measured) < majority(repeats):
        return False
    return spread(measured).relative_spread <= REPEAT_AGREEMENT
