"""The run's own checks, and the findings of every load shape, in one list: the assembly's last step.

A check fails only for what is the lab's or a target's fault. A calibration that misses N by less
than the noise the machine itself showed is reported as noise, with its size.
"""

from __future__ import annotations

import math

from labtester.calibrate import Calibration
from labtester.findings import Finding
from labtester.findings.wording import label
from labtester.results import CalibrationCheck, ClientUse, Results, TargetResult
from labtester.scenarios import SHAPES, TesterSettings
from labtester.stability import Stability


def calibration_check(calibration: Calibration, stability: Stability | None) -> CalibrationCheck:
    # The check times one request of N seconds: as likely off as the machine drifts between probes,
    # as it moved from one of the calibration's own earlier rounds to the next, or as the last
    # round's own requests at one count differed (calibrating stops at a miss inside that, so a
    # miss beyond every band is one where its rounds ran out; seen in a full `make test`: -13.4 %
    # against the probes' 8 %).
    probes = stability.seconds_band_pct if stability else None
    own = (calibration.earlier_step_pct, calibration.last_spread_pct)
    bands = [b for b in (probes, *own) if b is not None]
    band = max(bands) if bands else None
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
            f"{missed}, inside the machine's own noise ({check.band_pct:.0f} %: the widest of its "
            "per-iteration band, how far its speed drifted between probes, the most it moved "
            "from one of the calibration's earlier rounds to the next and how far apart its last "
            "round's own requests measured): noise, not a failure."
        )
        return [Finding(kind="noise", target=target.name, text=text)]
    band = f"; the machine's own noise was {check.band_pct:.0f} %" if check.band_pct is not None else ""
    return [Finding(kind="failure", target=target.name, text=f"{missed}{band}.")]


def _target_checks(target: TargetResult, clients: int) -> list[Finding]:
    name = label(target.name, target.info) + (f" ({target.url})" if target.url else "")
    found = [
        Finding(kind="failure", target=target.name, text=f"{name}: {e.stage} failed: {e.error}")
        for e in target.errors
    ]
    found += _calibration(target)
    found += _counts_and_clients(target, clients)
    check = target.prometheus
    if check is not None and not check.matches:
        differ = [r for r in check.routes if not r.matches]
        unsent = [c for c in check.sent if not c.matches]
        detail = check.error or "; ".join(
            [f"{r.route}: server {r.server:g}, Prometheus {r.prometheus}" for r in differ]
            + [
                f"{c.window} {c.route}: the clients sent {c.sent}, the server counted {c.server:g}"
                for c in unsent
            ]
        )
        found.append(
            Finding(kind="failure", target=target.name, text=f"{name}: Prometheus's counts differ: {detail}.")
        )
    return found


# A client at this share of its core or less keeps up with the load it sends.
HALF_A_CORE = 0.5
# A client's sending thread that waited for a core this share of a step was starved, and is told so.
STARVED = 0.1


def _client_text(name: str, use: ClientUse, clients: int) -> str:
    """A client at its limit: starved of a core by the machine (more clients would not help), or
    busy sending (more clients would)."""
    share, waited = use.core_share or 0.0, use.waiting_share or 0.0
    per_request = f"{use.cpu_per_request_s * 1000:.2f} ms" if use.cpu_per_request_s else "-"
    if waited > share:
        return (
            f"{name} {use.shape}: client {use.client} waited for a core {waited * 100:.0f} % of a step "
            f"(it used {share * 100:.0f} % of one): that step measures the client's wait too. "
            "The machine, not the server: run where the client gets its core."
        )
    more = max(clients + 1, math.ceil(clients * share / HALF_A_CORE))
    also = f" and waited for a core {waited * 100:.0f} % of a step" if waited >= STARVED else ""
    return (
        f"{name} {use.shape}: client {use.client} used {share * 100:.0f} % of its core ({per_request} "
        f"of CPU per request){also}: its figures measure the client too. "
        f"Spread the load over {more} clients (--clients {more}, tester.parallelism: {more})."
    )


def _counts_and_clients(target: TargetResult, clients: int) -> list[Finding]:
    """Requests the server counted against every client's sends; clients that were at their limit."""
    name = label(target.name, target.info)
    found = [
        Finding(
            kind="failure",
            target=target.name,
            subject=check.shape,
            text=f"{name}: the server counted {check.counted:g} {check.shape} requests, "
            f"the clients sent {check.sent}.",
        )
        for check in target.counts
        if not check.matches
    ]
    for use in (u for u in target.clients if u.saturated):
        found.append(
            Finding(
                kind="interference",
                target=target.name,
                subject=use.shape,
                text=_client_text(name, use, clients),
            )
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
        found += _target_checks(target, results.run.clients)
        for shape_name, summary in target.scenarios.items():
            found += SHAPES[shape_name].findings(summary, target)
    for shape in SHAPES.values():
        found += shape.across(results)
    found += [Finding(kind="failure", text=f"{e.stage} failed: {e.error}") for e in results.errors]
    if results.run.status != "complete":
        found.append(
            Finding(kind="failure", text=f"The run did not complete (status: {results.run.status}).")
        )
    return found


def missing_for(results: Results) -> list[str]:
    """What the settings planned that the results do not hold."""
    settings = TesterSettings.model_validate(results.run.settings)  # with the shapes' sections
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
