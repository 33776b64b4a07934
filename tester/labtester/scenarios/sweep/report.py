"""What the report says and shows of a sweep: per variant, the best speedup against the bound, where
p99 degrades, what splitting the wait changed; a table and a plot with a row per variant."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table

from labtester.plotting import gaps, plt, save_png
from labtester.scenarios.common import ms
from labtester.scenarios.sweep.analyse import SweepLevel, SweepSummary, VariantSummary

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from labtester.results import Results

# Above the bound by more than this share, the model is wrong there (said, never bent).
BEYOND_BOUND = 0.15

Section = tuple[str, list[tuple[str, VariantSummary]]]


def best(variant: VariantSummary) -> SweepLevel:
    return max(variant.levels, key=lambda e: e.speedup or 0)


def _knee_text(variant: VariantSummary) -> str:
    knee = variant.degrades_at
    if knee is None:
        return "p99 never degraded"
    p99 = {e.concurrency: e.p99_s or 0.0 for e in variant.levels}
    first = variant.levels[0]
    return (
        f"p99 degrades from concurrency {knee} ({(first.p99_s or 0) * 1000:.0f} ms at {first.concurrency}, "
        f"{p99[knee] * 1000:.0f} ms at {knee})"
    )


def variant_text(variant: VariantSummary) -> str:
    top, bound = best(variant), variant.bound
    share = f", {(top.speedup or 0) / bound * 100:.0f} % of the bound {bound:.1f}" if bound else " (no bound)"
    rule = variant.recommended_worker_connections
    advice = (
        f"the study's rule io/cpu recommends worker_connections = {rule:.0f}"
        if rule
        else "no CPU work, so the study's rule sets no limit"
    )
    return (
        f"sweep {variant.params.label()} (p = {variant.io_share:.2f}): best speedup "
        f"{top.speedup or 0:.1f} at concurrency {top.concurrency}{share}; {_knee_text(variant)}; {advice}."
    )


def splits_text(whole: VariantSummary, split: VariantSummary) -> str | None:
    """What cutting the same wait into more parts changed, at the level where p99 degraded with
    the wait in fewer parts (or the highest level both reached)."""
    p99_whole = {e.concurrency: e.p99_s for e in whole.levels if e.p99_s}
    p99_split = {e.concurrency: e.p99_s for e in split.levels if e.p99_s}
    common = sorted(set(p99_whole) & set(p99_split))
    if not common:
        return None
    at = whole.degrades_at if whole.degrades_at in common else common[-1]
    before, after = p99_whole[at] or 0.0, p99_split[at] or 0.0
    worse = after > before * (1 + BEYOND_BOUND)
    params = split.params
    return (
        f"sweep cpu {params.cpu_ms} ms, io {params.io_ms} ms with the wait in {params.splits} parts "
        f"instead of {whole.params.splits}: p99 at concurrency {at} {after * 1000:.0f} ms "
        f"instead of {before * 1000:.0f} ms, "
        f"best speedup {best(split).speedup or 0:.1f} instead of {best(whole).speedup or 0:.1f}"
        + (
            " (each part of the wait ends behind the CPU parts of other requests on the same thread)."
            if worse
            else " (no worse beyond noise)."
        )
    )


def shape_texts(summary: SweepSummary) -> list[str]:
    variants = [v for v in summary.variants if v.levels]
    texts = [variant_text(v) for v in variants]
    for variant in variants:
        same_work = [
            v
            for v in variants
            if (v.params.cpu_ms, v.params.io_ms) == (variant.params.cpu_ms, variant.params.io_ms)
        ]
        fewest = min(same_work, key=lambda v: v.params.splits)
        text = splits_text(fewest, variant) if variant is not fewest else None
        if text:
            texts.append(text)
    return texts


def departure_texts(summary: SweepSummary) -> list[str]:
    """Speedup above the bound by more than noise: the model is wrong there, and says so."""
    return [
        f"sweep {variant.params.label()}: speedup {entry.speedup:.2f} at concurrency {entry.concurrency} "
        f"exceeds the bound {variant.bound:.2f} by more than {BEYOND_BOUND * 100:.0f} %."
        for variant in summary.variants
        if variant.bound
        for entry in variant.levels
        if entry.speedup and entry.speedup > variant.bound * (1 + BEYOND_BOUND)
    ]


def sections(results: Results) -> list[Section]:
    """The sweeps by variant (in the order run): (label, [(target, variant summary)])."""
    found: dict[str, list[tuple[str, VariantSummary]]] = {}
    for target, summary in results.summaries(SweepSummary):
        for variant in summary.variants:
            found.setdefault(variant.params.label(), []).append((target.name, variant))
    return list(found.items())


def table(results: Results) -> Table:
    result = Table(
        title="Sweep: throughput speedup over concurrency 1 against the bound 1/(1 - p); variant = cpu/io ms "
        "x parts of the wait; rule = io/cpu, the study's worker_connections",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for column in (
        "variant",
        "rule",
        "target",
        "concurrency",
        "req/s",
        "speedup",
        "bound",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "CPU %",
        "fails",
        "",
    ):
        result.add_column(column, justify="left" if column in ("variant", "target", "") else "right")
    for _, rows in sections(results):
        for name, variant in rows:
            rule = variant.recommended_worker_connections
            for index, entry in enumerate(variant.levels):
                first = index == 0
                cpu = entry.cpu_utilisation
                result.add_row(
                    variant.params.short_label() if first else "",
                    ("-" if rule is None else f"{rule:.0f}") if first else "",
                    name if first else "",
                    str(entry.concurrency),
                    f"{entry.throughput_per_s:.0f}",
                    f"{entry.speedup:.2f}" if entry.speedup else "-",
                    f"{variant.bound:.1f}" if variant.bound else "-",
                    ms(entry.p50_s),
                    ms(entry.p95_s),
                    ms(entry.p99_s),
                    "-" if cpu is None else f"{cpu * 100:.0f}",
                    str(sum(entry.failures.values())),
                    "<- p99 degrades" if entry.concurrency == variant.degrades_at else "",
                )
            result.add_section()
    return result


def plot(results: Results, path: Path) -> Path | None:
    """One row per variant: speedup against concurrency with each target's bound, and latency
    percentiles with the study's rule (io/cpu) and the measured knee marked."""
    found = sections(results)
    if not found:
        return None
    figure, axes = plt.subplots(len(found), 2, figsize=(11, 3.6 * len(found)), squeeze=False)
    names = sorted({name for _, rows in found for name, _ in rows})
    colours = {name: plt.cm.tab10(i % 10) for i, name in enumerate(names)}
    for (label, rows), (speedup, latency) in zip(found, axes, strict=True):
        for name, variant in rows:
            _plot_variant(speedup, latency, variant, colours[name], name)
        rule = rows[0][1].recommended_worker_connections
        if rule:
            for axis in (speedup, latency):
                axis.axvline(rule, color="grey", linestyle="-.", alpha=0.7)
        speedup.set_title(f"{label}: speedup (dashed: bound 1/(1 - p); dash-dot: io/cpu)", fontsize=8)
        latency.set_title(f"{label}: p50 dotted, p95 dashed, p99 solid (X: p99 degrades)", fontsize=8)
        ticks = sorted({entry.concurrency for _, variant in rows for entry in variant.levels})
        for axis in (speedup, latency):
            axis.set_xscale("log", base=2)
            axis.set_xticks(ticks, [str(tick) for tick in ticks])
            axis.set_xlabel("concurrency")
            axis.grid(alpha=0.3)
            axis.legend(fontsize=7)
        latency.set_ylabel("seconds")
    figure.tight_layout()
    return save_png(figure, path)


def _plot_variant(speedup: Axes, latency: Axes, variant: VariantSummary, colour: object, name: str) -> None:
    levels = variant.levels
    concurrency = [entry.concurrency for entry in levels]
    speedup.plot(concurrency, gaps(e.speedup for e in levels), marker="o", color=colour, label=name)
    if variant.bound:
        speedup.axhline(variant.bound, linestyle="--", color=colour, alpha=0.6)
    for key, style in (("p50_s", ":"), ("p95_s", "--"), ("p99_s", "-")):
        latency.plot(
            concurrency,
            gaps(getattr(e, key) for e in levels),
            linestyle=style,
            color=colour,
            label=name if key == "p99_s" else None,
        )
    if variant.degrades_at:
        knee = next(e for e in levels if e.concurrency == variant.degrades_at)
        latency.plot([knee.concurrency], gaps([knee.p99_s]), marker="X", markersize=10, color=colour)
