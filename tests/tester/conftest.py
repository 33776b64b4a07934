"""One short real lab, run once per session: the lab's own tests and the report's read it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from labtester.targets import DEFAULT_VALUES


@pytest.fixture(scope="session")
def lab_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`python -m labtester lab` on the chart's targets minus one census variant, small N, n <= 3."""
    directory = tmp_path_factory.mktemp("lab")
    values = yaml.safe_load(DEFAULT_VALUES.read_text())
    values["targets"] = [t for t in values["targets"] if t["name"] != "fastapi-2workers"]
    for target in values["targets"]:
        target["localPort"] = 0  # the lab picks free ports
    (directory / "values.yaml").write_text(yaml.safe_dump(values))
    command = [sys.executable, "-m", "labtester", "lab", "--values", str(directory / "values.yaml")]
    command += ["--work-seconds", "0.4", "--burst-max", "3", "--repeats", "1"]
    command += ["--output", str(directory / "results")]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=900)
    runs = list((directory / "results").iterdir())
    assert len(runs) == 1, completed.stdout + completed.stderr
    return completed, runs[0]
