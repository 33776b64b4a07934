"""Results: an append-only raw log written as things are measured, and the results document
built from it.

The raw log (raw.jsonl) is the source of truth: every record is flushed to disk when measured, so
a crash, a dead target or SIGTERM never loses what was already measured. results.json, the CSV,
the plots and the HTML report are all built from it (`python -m labtester report DIR` rebuilds
them). results.json follows results.schema.json, versioned by SCHEMA_VERSION.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import IO, Any

from labtester.model import parallelism, predicted_makespan
from labtester.scenarios import LOAD_SHAPES, sweep
from labtester.stats import max_overlap, spread

SCHEMA_VERSION = 2  # 2: the sweep reports a list of variants
RAW_LOG = "raw.jsonl"


class RawLog:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / RAW_LOG
        self._file: IO[str] = self.path.open("a", encoding="utf-8")

    def write(self, record_type: str, **fields: Any) -> None:
        self._file.write(json.dumps({"type": record_type, **fields}, default=str) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def read_raw(directory: Path) -> list[dict[str, Any]]:
    records = []
    for line in (directory / RAW_LOG).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a line cut short by a crash: everything before it stands
    return records


def _failure_types(observations: list[dict[str, Any]]) -> Counter[str]:
    return Counter(o["error"] for o in observations if o["error"])


def _burst_summary(repeats: list[dict[str, Any]], single_s: float | None, capacity: Any) -> dict[str, Any]:
    n = repeats[0]["n"]
    succeeded = [r for r in repeats if not _failure_types(r["requests"])]
    summary: dict[str, Any] = {
        "n": n,
        "repeats": repeats,
        "failed_repeats": len(repeats) - len(succeeded),
        "makespan": None,
        "predicted_s": None,
        "ratio": None,
        "makespan_over_single": None,
        "max_overlap": None,
        "distinct_pids": None,
    }
    if not succeeded:
        return summary
    makespan = spread([r["makespan_s"] for r in succeeded])
    summary["makespan"] = makespan.as_dict()
    summary["max_overlap"] = max(r["max_overlap"] for r in succeeded)
    summary["distinct_pids"] = min(len({o["body"]["pid"] for o in r["requests"]}) for r in succeeded)
    if single_s:
        predicted = predicted_makespan(n, single_s, capacity)
        summary["predicted_s"] = predicted
        summary["ratio"] = makespan.median / predicted
        summary["makespan_over_single"] = makespan.median / single_s
    return summary


def _summarize_scenario(scenario: str, records: list[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
    if scenario == "sweep":
        return sweep.summarize(records, info)  # the bound comes from the target's /info
    return LOAD_SHAPES[scenario].summarize(records)


def build_results(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate the raw records into the results document (see results.schema.json)."""
    from labtester.findings import findings_for, missing_for

    start = next((r for r in records if r["type"] == "run_start"), None)
    if start is None:
        raise ValueError("the raw log has no run_start record")
    end = next((r for r in records if r["type"] == "run_end"), None)
    targets: dict[str, dict[str, Any]] = {}
    for record in records:
        kind, name = record["type"], record.get("target")
        if kind == "target":
            targets[name] = {
                "name": name,
                "url": record["url"],
                "measure": record["measure"],
                "ready": record["ready"],
                "info": record.get("info"),
                "errors": [],
                "census": {"idle": None, "under_load": []},
                "calibration": None,
                "endpoints": {},
                "scenarios": {},
            }
            if record.get("error"):
                targets[name]["errors"].append({"stage": "readiness", "error": record["error"]})
        elif kind == "error":
            targets[name]["errors"].append({"stage": record["stage"], "error": record["error"]})
        elif kind == "census":
            census = targets[name]["census"]
            if record["phase"] == "idle":
                census["idle"] = record["census"]
            else:
                census["under_load"].append({k: record[k] for k in ("endpoint", "n", "census")})
        elif kind == "scenario":
            targets[name]["scenarios"].setdefault(record["scenario"], []).append(record)
        elif kind == "calibration":
            targets[name]["calibration"] = record["calibration"]
        elif kind in ("baseline", "burst", "metrics"):
            endpoint = targets[name]["endpoints"].setdefault(
                record["endpoint"],
                {"name": record["endpoint"], "baseline": None, "raw_bursts": [], "metrics": []},
            )
            if kind == "baseline":
                endpoint["baseline"] = record
            elif kind == "burst":
                endpoint["raw_bursts"].append(record)
            else:
                endpoint["metrics"].append({k: v for k, v in record.items() if k not in ("type", "target")})

    for target in targets.values():
        info = target["info"] or {}
        for name, endpoint in target["endpoints"].items():
            description = info.get("endpoints", {}).get(name, {})
            capacity = parallelism(description, info.get("workers", 1), info.get("effective_cores", 1))
            endpoint.update({k: description.get(k) for k in ("path", "work", "execution", "slots")})
            endpoint["parallelism"] = {
                "slots": None if capacity.slots == float("inf") else capacity.slots,
                "cores": None if capacity.cores == float("inf") else capacity.cores,
                "description": capacity.describe(),
            }
            baseline = endpoint["baseline"]
            single_s = None
            if baseline and not _failure_types(baseline["observations"]):
                single_s = spread([o["latency_s"] for o in baseline["observations"]]).median
                endpoint["argument"] = baseline["argument"]
            endpoint["single_s"] = single_s
            by_n: dict[int, list[dict[str, Any]]] = {}
            for burst in endpoint.pop("raw_bursts"):
                ok = [o for o in burst["requests"] if o["body"]]
                burst["max_overlap"] = max_overlap(
                    [(o["body"]["started_at"], o["body"]["finished_at"]) for o in ok]
                )
                by_n.setdefault(burst["n"], []).append(burst)
            endpoint["bursts"] = [_burst_summary(by_n[n], single_s, capacity) for n in sorted(by_n)]
            observations = [o for b in by_n.values() for r in b for o in r["requests"]]
            if baseline:
                observations += baseline["observations"]
            endpoint["failures"] = dict(_failure_types(observations))
        target["endpoints"] = list(target["endpoints"].values())
        target["scenarios"] = {
            scenario: _summarize_scenario(scenario, records, info)
            for scenario, records in target["scenarios"].items()
        }

    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run": {
            "id": start["run_id"],
            "started_at": start["started_at"],
            "finished_at": end["finished_at"] if end else None,
            "status": end["status"] if end else "incomplete",
            "settings": start["settings"],
        },
        "targets": list(targets.values()),
    }
    document["findings"] = findings_for(document)
    document["missing"] = missing_for(document)
    document["failed_checks"] = [f["text"] for f in document["findings"] if f["kind"] == "failure"]
    return document
