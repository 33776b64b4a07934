"""results.json (the analysed document), and per-request CSVs from the raw log: requests.csv (the
bursts), scenario-requests.csv (every request of the load-client shapes)."""

from __future__ import annotations

import csv
from pathlib import Path

from labtester.atomic import replacing, write_text
from labtester.load import SAMPLE_FIELDS
from labtester.rawlog import Record
from labtester.results import Results
from labtester.scenarios import SHAPES

RESULTS_JSON = "results.json"
SCENARIO_CSV = "scenario-requests.csv"
# variant: the workload variant a shape names in its record (the sweep's query); concurrency: the
# level it ran at, where it has levels.
SCENARIO_CSV_COLUMNS = ["target", "scenario", "variant", "concurrency", *SAMPLE_FIELDS]


def write_scenario_csv(records: list[Record], path: Path) -> Path | None:
    """One row per request of the load-client shapes (times in seconds since each one started)."""
    sampled = [r for r in records if r["type"] == "scenario" and "samples" in r]
    if not sampled:
        return None
    with replacing(path, newline="") as file:
        writer = csv.writer(file)
        writer.writerow(SCENARIO_CSV_COLUMNS)
        for record in sampled:
            for row in record["samples"]["rows"]:
                writer.writerow(
                    [
                        record["target"],
                        record["scenario"],
                        record.get("variant", ""),
                        record.get("concurrency"),
                        *row,
                    ]
                )
    return path


def write_files(results: Results, records: list[Record], directory: Path) -> list[Path]:
    path = directory / RESULTS_JSON
    written = [write_text(path, results.model_dump_json(indent=2) + "\n")]
    shapes = {r["scenario"] for r in records if r["type"] == "scenario"} | set(
        results.lab_settings().scenarios
    )
    for name in sorted(shapes & set(SHAPES)):
        written += SHAPES[name].files(records, directory)
    scenario_csv = write_scenario_csv(records, directory / SCENARIO_CSV)
    return written + ([scenario_csv] if scenario_csv else [])
