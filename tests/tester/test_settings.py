from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from labtester.__main__ import LAB_FLAGS, main
from labtester.scenarios import TesterSettings


def test_targets_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TESTER_TARGETS", "fastapi=http://fastapi:8000/, flask-1x=http://flask-1x:8000")
    monkeypatch.setenv("TESTER_CENSUS_ONLY", "reload=http://reload:8000")
    monkeypatch.setenv("TESTER_WORK_SECONDS", "1.5")
    settings = TesterSettings.load()
    assert [(t.name, t.url, t.measure) for t in settings.targets] == [
        ("fastapi", "http://fastapi:8000", True),
        ("flask-1x", "http://flask-1x:8000", True),
    ]
    assert settings.census_only[0].measure is False
    assert settings.work_seconds == 1.5


def test_file_then_env_then_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "lab.yaml"
    config.write_text("work_seconds: 3\nrepeats: 5\nburst_max: 4\n")
    monkeypatch.setenv("TESTER_REPEATS", "2")
    settings = TesterSettings.load(config, burst_max=2)
    assert (settings.work_seconds, settings.repeats, settings.burst_max) == (3, 2, 2)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TESTER_TARGETS", "no-url-here"),
        ("TESTER_TARGETS", "a=ftp://x"),
        ("TESTER_TARGETS", "a=http://x,a=http://y"),
        ("TESTER_WORK_SECONDS", "-1"),
        ("TESTER_BURST_MAX", "0"),
        ("TESTER_SCENARIOS", "bursts,nonsense"),
    ],
)
def test_bad_settings_are_refused(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError):
        TesterSettings.load()


def test_a_typo_in_a_settings_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "lab.yaml"
    config.write_text("work_second: 3\n")
    with pytest.raises(ValidationError, match="work_second"):
        TesterSettings.load(config)


def test_bursts_alone_by_default() -> None:
    # `make lab` runs the default: the other load shapes would take it past its few minutes.
    assert TesterSettings().scenarios == ["bursts"]


def test_sweep_variants_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "TESTER_SWEEP__VARIANTS", '[{"cpu_ms": 5, "io_ms": 55}, {"cpu_ms": 5, "io_ms": 55, "splits": 5}]'
    )
    monkeypatch.setenv("TESTER_SWEEP__LEVELS", "[1, 4]")
    sweep = TesterSettings.load().sweep
    assert [(v.cpu_ms, v.io_ms, v.splits) for v in sweep.variants] == [(5, 55, 1), (5, 55, 5)]
    assert sweep.levels == [1, 4]


def test_the_sweep_defaults_are_the_studys_two_ratios_whole_and_split() -> None:
    variants = TesterSettings().sweep.variants
    assert {(v.cpu_ms, v.io_ms) for v in variants} == {(5, 55), (50, 150)}
    assert {v.splits for v in variants} == {1, 5}


@pytest.mark.parametrize(
    "value",
    [
        "[]",
        '[{"cpu_ms": 5}]',
        '[{"cpu_ms": 5, "io_ms": 55, "splits": 0}]',
        '[{"cpu_ms": 5, "io_ms": 5, "x": 1}]',
    ],
)
def test_bad_sweep_variants_are_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TESTER_SWEEP__VARIANTS", value)
    with pytest.raises(ValidationError):
        TesterSettings.load()


def test_the_default_is_the_quick_bursts_matrix() -> None:
    settings = TesterSettings.load()
    assert settings.scenarios == ["bursts"]
    assert (settings.work_seconds, settings.burst_max, settings.repeats) == (0.5, 5, 3)


def test_help_shows_every_default_from_the_one_settings_model(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["lab", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for field, flag in LAB_FLAGS.items():
        default = TesterSettings.model_fields[field].get_default(call_default_factory=True)
        default = ",".join(default) if isinstance(default, list) else default
        # A flag with nothing by default (--app, --paths) shows none.
        assert f"(default: {default})" in shown if default else f"{flag} " in shown
