"""How findings say things: one place for labels, counts and numbers."""

from __future__ import annotations

from labtester.info import TargetInfo


def plural(count: float, word: str, many: str | None = None) -> str:
    """`1 worker`, `4 workers`; `many` for words that do not just take an s (processes)."""
    return f"{count:g} {word if count == 1 else many or word + 's'}"


def label(name: str, info: TargetInfo | None) -> str:
    """`flask-2x (gunicorn, 4 workers)`, or the bare name when /info never answered."""
    return info.label(name) if info else name


def pct(fraction: float) -> str:
    return f"{fraction * 100:.0f} %"


def times(value: float) -> str:
    return f"{value:.1f} x T"


def milliseconds(value: float) -> str:
    """`38 ms`, `2.1 ms`, `0.04 ms`: as many digits as a request's time or CPU deserves."""
    return f"{_ms(value)} ms"


def _ms(value: float) -> str:
    ms = value * 1000
    return f"{ms:.0f}" if ms >= 10 else f"{ms:.1f}" if ms >= 1 else f"{ms:.2f}"


def seconds(value: float) -> str:
    """`0.55 s`; under a tenth of a second, `milliseconds` (a light path's p99 read `0.00 s`)."""
    return f"{value:.2f} s" if value >= 0.1 else milliseconds(value)


def seconds_between(low: float, high: float) -> str:
    """`0.36-1.03 s`; `1.1-2.3 ms` where the higher is under a tenth of a second (as `seconds`)."""
    return f"{low:.2f}-{high:.2f} s" if high >= 0.1 else f"{_ms(low)}-{_ms(high)} ms"
