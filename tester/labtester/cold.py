"""A process's first request of a path pays the path's one-time costs (imports done lazily, templates
compiled, statements and caches built), which no later request of it pays: sqladmin from PyPI
(2026-12-02), the list page's first request in a process used 356-506 ms of CPU and the next four
92-153; a row's details 40-46 ms against 4.4-10.8. Taken as the path's cost alone, those put its
mean at 1.7x and 2.6x what it costs from then on, and a proof whose processes had never served it
measured its requests at 2.3x the plan's. Figures of a path's steady cost leave them out (`warm`);
a proof first has each of its processes serve each request (proposal/warming.py)."""

from __future__ import annotations

from collections.abc import Sequence

from labtester.load import Sample


def cold(samples: Sequence[Sample]) -> list[bool]:
    """Per sample (one path's, in the order sent; answered or not), whether it is its process's
    first of them: by the process its response named, and where responses name none, the first."""
    seen: set[int | None] = set()
    firsts = []
    for s in samples:
        firsts.append(s.pid not in seen and (s.pid is not None or not seen))
        seen.add(s.pid)
    return firsts


def warm(samples: Sequence[Sample]) -> list[Sample]:
    """These samples (one path's, in the order sent) but each process's first."""
    return [s for s, first in zip(samples, cold(samples), strict=True) if not first]


def cold_cpu_s(samples: Sequence[Sample]) -> float | None:
    """The mean CPU of the answered firsts among these (one path's, in the order sent): what a process
    pays once for the path; None where none was answered with its CPU."""
    firsts = zip(samples, cold(samples), strict=True)
    used = [s.cpu_s for s, first in firsts if first and s.ok and s.cpu_s is not None]
    return sum(used) / len(used) if used else None
