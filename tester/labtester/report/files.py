"""results.json (the whole document) and requests.csv (one row per request)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labtester.loadclient import SAMPLE_FIELDS

CSV_COLUMNS = [
    "target",
    "endpoint",
    "phase",
    "n",
    "repeat",
    "argument",
    "status",
    "error",
    "sent_at",
    "latency_s",
    "server_started_at",
    "server_finished_at",
    "server_duration_s",
    "pid",
]


def write_json(document: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(document, indent=2, default=str) + "\n", encoding="utf-8")


def request_rows(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for target in document["targets"]:
        for endpoint in target["endpoints"]:
            baseline = endpoint["baseline"]
            groups = (
                [
                    ("baseline", 1, i, baseline["argument"], [o])
                    for i, o in enumerate(baseline["observations"])
                ]
                if baseline
                else []
            )
            groups += [
                ("burst", burst["n"], repeat["repeat"], repeat["argument"], repeat["requests"])
                for burst in endpoint["bursts"]
                for repeat in burst["repeats"]
            ]
            for phase, n, repeat, argument, observations in groups:
                for observation in observations:
                    body = observation["body"] or {}
                    yield {
                        "target": target["name"],
                        "endpoint": endpoint["name"],
                        "phase": phase,
                        "n": n,
                        "repeat": repeat,
                        "argument": argument,
                        "status": observation["status"],
                        "error": observation["error"],
                        "sent_at": observation["sent_at"],
                        "latency_s": observation["latency_s"],
                        "server_started_at": body.get("started_at"),
                        "server_finished_at": body.get("finished_at"),
                        "server_duration_s": body.get("duration_s"),
                        "pid": body.get("pid"),
                    }


def write_csv(document: dict[str, Any], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(request_rows(document))


# variant: the sweep's cpu_ms/io_ms/splits as in the request's query; empty for other shapes.
SCENARIO_CSV_COLUMNS = ["target", "scenario", "variant", "concurrency", *SAMPLE_FIELDS]


def _variant(record: dict[str, Any]) -> str:
    params = record.get("params") or {}
    keys = ("cpu_ms", "io_ms", "splits")
    return "&".join(f"{k}={params[k]}" for k in keys) if record["scenario"] == "sweep" else ""


def write_scenario_csv(raw_records: list[dict[str, Any]], path: Path) -> bool:
    """One row per request of the load shapes (times in seconds since each scenario started)."""
    records = [r for r in raw_records if r["type"] == "scenario"]
    if not records:
        return False
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(SCENARIO_CSV_COLUMNS)
        for record in records:
            for row in record["samples"]["rows"]:
                writer.writerow(
                    [record["target"], record["scenario"], _variant(record), record.get("concurrency"), *row]
                )
    return True
