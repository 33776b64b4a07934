"""scripts/lab_release/profiles.py: which HELM_ARGS choose the profile, and which only overlay it."""

from __future__ import annotations

from pathlib import Path

from lab_release.profiles import names_profile
from tests.chart.conftest import CHART

TWO_CPU = CHART / "ci" / "two-cpu-values.yaml"


def test_a_values_file_with_fits_chooses_the_profile_and_an_overlay_does_not(tmp_path: Path) -> None:
    overlay = tmp_path / "proposal-values.yaml"
    overlay.write_text("app:\n  enabled: true\n")
    assert names_profile(["-f", str(TWO_CPU)]) and names_profile([f"--values={TWO_CPU}"])
    assert not names_profile(["-f", str(overlay)]) and not names_profile(["--set", "app.enabled=true"])
    assert names_profile(["-f", f"{overlay},{TWO_CPU}"])  # helm's comma-separated list
    # What cannot be read here (a URL, a file elsewhere) is taken as the user's own choice.
    assert names_profile(["-f", "https://example.invalid/values.yaml"])
