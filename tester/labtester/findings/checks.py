"""The run's own checks, and the findings of every load shape, in one list.

A check fails only for what is the lab's or a target's fault. A calibration that misses N by less
than the noise the machine itself showed is reported as noise, with its size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from labtester.calibrate import Calibration
from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.scenarios import SHAPES
from labtester.stability import Stability

if TYPE_CHECKING:
    from labtester.results import CalibrationCheck, Results, TargetResult


def calibration_check(calibration: Calibration, stability: Stability | None) -> CalibrationCheck:
    from labtester.results import CalibrationCheck

    # The check times one request of N seconds: as likely off as the machine drifts between probes.
    band = stability.seconds_band_pct if stability else None
    error = calibration.error_pct
    if calibration.within_tolerance:
        verdict = "ok"
    elif band is not None and abs(error) <= band:
        verdict = "noise"
    else:
        verdict = "missed"
    return CalibrationCheck(
        verdict=verdict, error_pct=error, tolerance_pct=calibration.tolerance * 100, band_pct=band
    )


def _calibration(target: TargetResult) -> list[Finding]:
    check, calibration = target.calibration_check, target.calibration
    if check is None or calibration is None or check.verdict == "ok":
        return []
    missed = (
        f"{label(target.name, target.info)}: calibration missed N = {calibration.target_seconds:g} s by "
        f"{check.error_pct:+.1f} % (tolerance {check.tolerance_pct:g} %)"
    )
    if check.verdict == "noise":
        text = (
            f"{missed}, inside the machine's own noise ({check.band_pct:.0f} %: the wider of its "
            "per-iteration band and how far its speed drifted between probes): noise, not a failure."
        )
        return [Finding(kind="noise", target=target.name, text=text)]
    band = f"; the machine's own noise was {check.band_pct:.0f} %" if check.band_pct is not None else ""
    return [Finding(kind="failure", target=target.name, text=f"{missed}{band}.")]


def _target_checks(target: TargetResult) -> list[Finding]:
    name = label(target.name, target.info) + (f" ({target.url})" if target.url else "")
    found = [
        Finding(kind="failure", target=target.name, text=f"{name}: {e.stage} failed: {e.error}")
        for e in target.errors
    ]
    found += _calibration(target)
    check = target.prometheus
    if check is not None and not check.matches:
        differ = [r for r in check.routes if not r.matches]
        detail = check.error or "; ".join(
            f"{r.route}: server {r.server:g}, Prometheus {r.prometheus}" for r in differ
        )
        found.append(
            Finding(kind="failure", target=target.name, text=f"{name}: Prometheus's counts differ: {detail}.")
        )
    return found


def findings_for(results: Results) -> list[Finding]:
    found = []
    if results.stability and results.stability.unstable:
        found.append(
            Finding(
                kind="noise",
                text=f"The machine was unstable: {results.stability.describe()}. Every figure judged against "
                "one calibrated T moves with it; bursts are judged against their own measured work.",
            )
        )
    for target in results.targets:
        found += _target_checks(target)
        for shape_name, summary in target.scenarios.items():
            found += SHAPES[shape_name].findings(summary, target)
    for shape in SHAPES.values():
        found += shape.across(results)
    if results.run.status != "complete":
        found.append(
            Finding(kind="failure", text=f"The run did not complete (status: {results.run.status}).")
        )
    return found


def missing_for(results: Results) -> list[str]:
    """What the settings planned that the results do not hold."""
    settings = results.lab_settings()
    missing = []
    for target in results.targets:
        if not target.measure:
            continue
        if not target.ready or target.info is None:
            started = all(error.stage != "start" for error in target.errors)
            missing.append(f"{target.name}: not measured ({'never ready' if started else 'did not start'})")
            continue
        for shape_name in settings.scenarios:
            shape = SHAPES[shape_name]
            if shape.applies(target.info):
                gaps = shape.missing(target.scenarios.get(shape_name), target.info, settings)
                missing += [f"{target.name} {shape_name}: {gap}" for gap in gaps]
    return missing
