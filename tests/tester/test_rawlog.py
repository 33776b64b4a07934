"""The raw log is the source of truth: a damaged line costs that line alone, and the reports
built from it are written whole or not at all."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labtester.atomic import replacing, write_text
from labtester.rawlog import RAW_LOG


def test_report_skips_a_damaged_line_names_it_and_keeps_what_follows(
    lab_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    run_dir = tmp_path / lab_run[1].name
    shutil.copytree(lab_run[1], run_dir)
    lines = (run_dir / RAW_LOG).read_text().splitlines()
    # A stability probe record in the middle of the run, with every target's bursts after it.
    middle = [i for i, line in enumerate(lines) if json.loads(line)["type"] == "probe"][1]
    assert middle < len(lines) // 2
    lines[middle] = lines[middle][: len(lines[middle]) // 2]  # cut, as a damaged disk or editor would
    (run_dir / RAW_LOG).write_text("\n".join(lines) + "\n")
    for report in ("results.json", "report.html", "summary.txt"):
        (run_dir / report).unlink()

    command = [sys.executable, "-m", "labtester", "report", str(run_dir)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)

    assert f"raw.jsonl: line {middle + 1} skipped, not JSON" in completed.stdout, completed.stdout
    before = json.loads((lab_run[1] / "results.json").read_text())
    after = json.loads((run_dir / "results.json").read_text())
    # Everything after the damaged line is there: every target, every burst of every target.
    assert [t["name"] for t in after["targets"]] == [t["name"] for t in before["targets"]]
    for old, new in zip(before["targets"], after["targets"], strict=True):
        assert json.dumps(new["scenarios"]).count('"n":') == json.dumps(old["scenarios"]).count('"n":')
    assert after["run"]["status"] == before["run"]["status"] == "complete"
    assert (run_dir / "report.html").exists() and (run_dir / "summary.txt").exists()
    assert not list(run_dir.rglob(".*.partial"))


def test_a_write_that_fails_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    path = write_text(tmp_path / "results.json", '{"whole": true}\n')
    with pytest.raises(RuntimeError), replacing(path) as file:
        file.write('{"half": ')
        raise RuntimeError("killed while writing")
    assert path.read_text() == '{"whole": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_a_reader_never_sees_half_a_file(tmp_path: Path) -> None:
    path = write_text(tmp_path / "summary.txt", "old\n")
    with replacing(path) as file:
        file.write("new, ")
        assert path.read_text() == "old\n"  # until the block ends, the old file is the file
        file.write("whole\n")
    assert path.read_text() == "new, whole\n"
