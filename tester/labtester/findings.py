"""Plain-English findings from the results: what the bursts show, where reality departs from
the model (said, never bent to fit), and which checks failed."""

from __future__ import annotations

from typing import Any

from labtester.scenarios.sweep import variant_label

# Measured within this share of the model counts as agreeing with it.
MODEL_AGREEMENT = 0.15


def _finding(kind: str, text: str, target: str | None = None, endpoint: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "target": target, "endpoint": endpoint, "text": text}


def _label(target: dict[str, Any]) -> str:
    info = target.get("info") or {}
    workers = info.get("workers")
    if workers is None:
        return target["name"]
    return f"{target['name']} ({info.get('server', '?')}, {workers} worker{'s' * (workers != 1)})"


def _shape(n: int, times_single: float) -> str:
    if n > 1 and times_single >= 0.85 * n:
        return "served one at a time"
    if times_single <= 1.15:
        return "all at once"
    return f"about {n / times_single:.1f} at a time"


def _endpoint_findings(target: dict[str, Any], endpoint: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    name, label = endpoint["name"], _label(target)
    measured = [b for b in endpoint["bursts"] if b["makespan_over_single"] is not None]
    if measured:
        largest = measured[-1]
        n, times = largest["n"], largest["makespan_over_single"]
        predicted = largest["predicted_s"] / endpoint["single_s"]
        text = f"{label}: {n} simultaneous {name} requests took {times:.1f} x T - {_shape(n, times)}"
        if abs(largest["ratio"] - 1) <= MODEL_AGREEMENT:
            found.append(
                _finding(
                    "shape",
                    f"{text}, as the model predicts ({endpoint['parallelism']['description']}).",
                    target["name"],
                    name,
                )
            )
        else:
            found.append(_finding("shape", f"{text}.", target["name"], name))
        for burst in measured:
            if abs(burst["ratio"] - 1) > MODEL_AGREEMENT:
                found.append(
                    _finding(
                        "departure", _departure(label, name, burst, endpoint, predicted), target["name"], name
                    )
                )
    for error, count in sorted(endpoint["failures"].items()):
        found.append(
            _finding("failure", f"{label}: {count} {name} request(s) failed: {error}.", target["name"], name)
        )
    for metrics in endpoint["metrics"]:
        if not metrics["matches"]:
            found.append(
                _finding(
                    "failure",
                    f"{label}: the server counted {metrics['counted']:g} {name} requests, the tester sent "
                    f"{metrics['sent']}.",
                    target["name"],
                    name,
                )
            )
    return found


def _departure(label: str, name: str, burst: dict[str, Any], endpoint: dict[str, Any], _: float) -> str:
    n, slots = burst["n"], endpoint["parallelism"]["slots"]
    text = (
        f"{label}: {n} simultaneous {name} requests took {burst['makespan_over_single']:.2f} x T, "
        f"the model predicted {burst['predicted_s'] / endpoint['single_s']:.2f} x T "
        f"({endpoint['parallelism']['description']}); measured/model = {burst['ratio']:.2f}."
    )
    usable = min(n, slots) if slots else n
    if burst["ratio"] > 1 and burst["distinct_pids"] is not None and burst["distinct_pids"] < usable:
        text += (
            f" Only {burst['distinct_pids']} process(es) took the {n} requests where {usable:g} could have:"
            " the OS handed several to the same worker (accept fairness), the model assumes an even spread."
        )
    return text


def _failures_text(failures: dict[str, int]) -> str:
    return "; ".join(f"{error}: {count}" for error, count in failures.items()) or "none"


def _closed_text(c: dict[str, Any]) -> str:
    median_ms = c["latency_s"].get("median", 0) * 1000
    return (
        f"closed loop of {c['requests']} requests at concurrency {c['params']['concurrency']}: "
        f"{c['success_ratio'] * 100:.1f} % succeeded, {c['throughput_per_s']:.0f} req/s, "
        f"median {median_ms:.0f} ms; "
        f"failures: {_failures_text(c['failures'])}."
    )


def _ramp_text(r: dict[str, Any]) -> str:
    stats = r["stats"]
    return (
        f"ramp to {r['params']['users']} users: {stats['requests']} requests, "
        f"{stats['requests_per_s']:.1f} req/s, "
        f"median {stats.get('median', 0) * 1000:.0f} ms, p99 {stats.get('p99', 0) * 1000:.0f} ms; "
        f"failures: {_failures_text(r['failures'])}."
    )


def _best(variant: dict[str, Any]) -> dict[str, Any]:
    return max(variant["levels"], key=lambda e: e["speedup"] or 0)


def _knee_text(variant: dict[str, Any]) -> str:
    knee = variant["degrades_at"]
    if knee is None:
        return "p99 never degraded"
    p99 = {e["concurrency"]: e["p99_s"] for e in variant["levels"]}
    first = variant["levels"][0]
    return (
        f"p99 degrades from concurrency {knee} ({first['p99_s'] * 1000:.0f} ms at {first['concurrency']}, "
        f"{p99[knee] * 1000:.0f} ms at {knee})"
    )


def _sweep_variant_text(variant: dict[str, Any]) -> str:
    best = _best(variant)
    bound = variant["bound"]
    share = f", {best['speedup'] / bound * 100:.0f} % of the bound {bound:.1f}" if bound else " (no bound)"
    rule = variant["recommended_worker_connections"]
    advice = (
        f"the study's rule io/cpu recommends worker_connections = {rule:.0f}"
        if rule
        else "no CPU work, so the study's rule sets no limit"
    )
    return (
        f"sweep {variant_label(variant['params'])} (p = {variant['io_share']:.2f}): best speedup "
        f"{best['speedup']:.1f} at concurrency {best['concurrency']}{share}; {_knee_text(variant)}; {advice}."
    )


def _splits_text(whole: dict[str, Any], split: dict[str, Any]) -> str | None:
    """What cutting the same wait into more parts changed, at the level where p99 degraded with
    the wait in fewer parts (or the highest level both reached)."""
    p99_whole = {e["concurrency"]: e["p99_s"] for e in whole["levels"] if e["p99_s"]}
    p99_split = {e["concurrency"]: e["p99_s"] for e in split["levels"] if e["p99_s"]}
    common = sorted(set(p99_whole) & set(p99_split))
    if not common:
        return None
    at = whole["degrades_at"] if whole["degrades_at"] in common else common[-1]
    worse = p99_split[at] > p99_whole[at] * (1 + MODEL_AGREEMENT)
    params = split["params"]
    return (
        f"sweep cpu {params['cpu_ms']} ms, io {params['io_ms']} ms with the wait in {params['splits']} parts "
        f"instead of {whole['params']['splits']}: p99 at concurrency {at} {p99_split[at] * 1000:.0f} ms "
        f"instead of {p99_whole[at] * 1000:.0f} ms, best speedup {_best(split)['speedup']:.1f} instead of "
        f"{_best(whole)['speedup']:.1f}"
        + (
            " (each part of the wait ends behind the CPU parts of other requests on the same thread)."
            if worse
            else " (no worse beyond noise)."
        )
    )


def _sweep_texts(summary: dict[str, Any]) -> list[str]:
    variants = [v for v in summary["variants"] if v["levels"]]
    texts = [_sweep_variant_text(v) for v in variants]
    for variant in variants:
        same_work = [
            v
            for v in variants
            if (v["params"]["cpu_ms"], v["params"]["io_ms"])
            == (variant["params"]["cpu_ms"], variant["params"]["io_ms"])
        ]
        fewest = min(same_work, key=lambda v: v["params"]["splits"])
        text = _splits_text(fewest, variant) if variant is not fewest else None
        if text:
            texts.append(text)
    return texts


def _sweep_departures(summary: dict[str, Any]) -> list[str]:
    """Speedup above the bound by more than noise: the model is wrong there, and says so."""
    texts = []
    for variant in summary["variants"]:
        bound = variant["bound"]
        for entry in variant["levels"]:
            if bound and entry["speedup"] and entry["speedup"] > bound * (1 + MODEL_AGREEMENT):
                texts.append(
                    f"sweep {variant_label(variant['params'])}: speedup {entry['speedup']:.2f} at "
                    f"concurrency {entry['concurrency']} exceeds the bound {bound:.2f} by more than "
                    f"{MODEL_AGREEMENT * 100:.0f} %."
                )
    return texts


def _rate_text(r: dict[str, Any]) -> str | None:
    scheduled, service = r["latency_from_schedule_s"], r["service_latency_s"]
    if not scheduled or not service:
        return None
    queued = scheduled["p99"] > 1.5 * service["p99"]
    return (
        f"{r['params']['per_s']:g} req/s for {r['params']['duration_s']:g} s: p99 from the schedule "
        f"{scheduled['p99'] * 1000:.0f} ms vs {service['p99'] * 1000:.0f} ms from the send"
        + ("; requests waited before the server took them, which a closed loop would hide" if queued else "")
        + f"; {r['late_sends']} late and {r['dropped']} dropped sends"
        + f"; failures: {_failures_text(r['failures'])}."
    )


SCENARIO_TEXTS = {"closed": _closed_text, "ramp": _ramp_text, "rate": _rate_text}


def _scenario_findings(target: dict[str, Any]) -> list[dict[str, Any]]:
    """What each load shape showed. Failed requests under load are results, reported by type."""
    found = []
    for scenario, summary in target["scenarios"].items():
        departures: list[str] = []
        if scenario == "sweep":  # one finding per variant, and what splitting the waits changed
            texts, departures = _sweep_texts(summary), _sweep_departures(summary)
        else:
            text = SCENARIO_TEXTS[scenario](summary)
            texts = [text] if text else []
        for kind, text in [*(("shape", t) for t in texts), *(("departure", t) for t in departures)]:
            found.append(_finding(kind, f"{_label(target)}: {text}", target["name"], scenario))
    return found


def findings_for(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for target in document["targets"]:
        label = _label(target)
        for error in target["errors"]:
            found.append(
                _finding(
                    "failure",
                    f"{label} ({target['url']}): {error['stage']} failed: {error['error']}",
                    target["name"],
                )
            )
        calibration = target.get("calibration")
        if calibration and not calibration["within_tolerance"]:
            found.append(
                _finding(
                    "failure",
                    f"{label}: calibration missed N = {calibration['target_seconds']:g} s by "
                    f"{calibration['error_pct']:+.1f} % (tolerance {calibration['tolerance'] * 100:g} %).",
                    target["name"],
                )
            )
        for endpoint in target["endpoints"]:
            found.extend(_endpoint_findings(target, endpoint))
        found.extend(_scenario_findings(target))
    if document["run"]["status"] != "complete":
        found.append(_finding("failure", f"The run did not complete (status: {document['run']['status']})."))
    return found


def missing_for(document: dict[str, Any]) -> list[str]:
    """What the settings planned that the results do not hold."""
    settings = document["run"]["settings"]
    planned_n = range(1, settings["burst_max"] + 1)
    missing = []
    for target in document["targets"]:
        if not target["measure"]:
            continue
        if not target["ready"] or not target["info"]:
            missing.append(f"{target['name']}: not measured (never ready)")
            continue
        for scenario in (s for s in settings["scenarios"] if s != "bursts"):
            if scenario not in target["scenarios"]:
                missing.append(f"{target['name']} {scenario}: not run")
        if "bursts" not in settings["scenarios"]:
            continue
        measured = {e["name"]: e for e in target["endpoints"]}
        for name in (e for e in settings["endpoints"] if e in target["info"]["endpoints"]):
            endpoint = measured.get(name)
            if endpoint is None:
                missing.append(f"{target['name']} {name}: not measured")
                continue
            repeats = {b["n"]: len(b["repeats"]) for b in endpoint["bursts"]}
            for n in planned_n:
                if repeats.get(n, 0) < settings["repeats"]:
                    missing.append(
                        f"{target['name']} {name} n={n}: {repeats.get(n, 0)} of {settings['repeats']} repeats"
                    )
    return missing
