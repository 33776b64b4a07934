"""The README shows what the code says, from the one place that says it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from labtester.targets import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()


def test_the_first_two_commands_are_make_lab_and_make_test() -> None:
    commands = re.findall(r"^make (\w+)", README.split("```bash", 1)[1], re.MULTILINE)
    assert commands[:2] == ["lab", "test"]


def test_the_knobs_and_defaults_shown_are_the_settings_model_s() -> None:
    block = re.search(r"<!-- lab-help:.*?-->\n```\n(.*?)\n```\n<!-- /lab-help -->", README, re.DOTALL)
    assert block, "README lost its lab-help block"
    shown = subprocess.run(
        [sys.executable, "-m", "labtester", "lab", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        check=True,
    ).stdout.rstrip()
    assert block.group(1) == shown, "regenerate it: COLUMNS=100 python -m labtester lab --help"
