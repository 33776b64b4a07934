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


def milliseconds(seconds: float) -> str:
    """`38 ms`, `2.1 ms`, `0.04 ms`: as many digits as a request's time or CPU deserves."""
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms" if ms >= 1 else f"{ms:.2f} ms"
