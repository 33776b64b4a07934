"""What kind-up and kind-down keep and act on, run as they are (bash), with docker, kind, sysctl
and the name service replaced by recorders: nothing here touches the engine or the kernel."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from labtester.targets import REPO_ROOT

LISTED = [
    line
    for line in (REPO_ROOT / "platform/node/host-sysctls").read_text().splitlines()
    if line and line[0] != "#"
]


def fake_bin(directory: Path, scripts: dict[str, str]) -> Path:
    directory.mkdir(exist_ok=True)
    for name, body in scripts.items():
        path = directory / name
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
    return directory


def run(command: list[str], env: dict[str, str], fakes: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env, "PATH": f"{fakes}:{os.environ['PATH']}"}
    return subprocess.run(command, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=60)


@pytest.fixture
def recorder(tmp_path: Path) -> tuple[Path, Path]:
    """Fake docker (no engine), kind, and sysctl: reads answer 7, writes are logged, not made."""
    log = tmp_path / "sysctl.log"
    fakes = fake_bin(
        tmp_path / "bin",
        {
            "docker": "exit 1",
            "sudo": 'shift; exec "$@"',  # -n sysctl ...: the fake below
            "sysctl": f'if [[ $1 == -n ]]; then echo 7; else echo "$*" >>{log}; fi',
        },
    )
    return fakes, log


def kind_down(state: Path, fakes: Path) -> subprocess.CompletedProcess[str]:
    env = {"KIND": "false", "CLUSTER": "none", "LAB_STATE_DIR": str(state)}
    return run(["scripts/kind-down"], env, fakes)


def test_kind_down_restores_only_the_listed_settings_and_only_numbers(
    tmp_path: Path, recorder: tuple[Path, Path]
) -> None:
    fakes, log = recorder
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / "host-sysctls.before").write_text(
        f"{LISTED[0]}=0\n"
        "kernel.core_pattern=|/tmp/evil %p\n"  # not the lab's to write, whatever its value
        f"{LISTED[1]}=1; reboot\n"  # the lab's key, but no number
        f"{LISTED[2]}=-1\n"
    )
    completed = kind_down(state, fakes)
    assert completed.returncode == 0, completed.stderr
    assert log.read_text().splitlines() == [f"-q -w {LISTED[0]}=0", f"-q -w {LISTED[2]}=-1"]
    assert "kernel.core_pattern is not a setting the lab records" in completed.stderr
    assert f"{LISTED[1]}=1; reboot is not a number" in completed.stderr
    assert not (state / "host-sysctls.before").exists()


def test_kind_down_refuses_a_state_folder_someone_else_owns(
    tmp_path: Path, recorder: tuple[Path, Path]
) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a folder another user owns takes root")
    fakes, log = recorder
    state = tmp_path / "state"
    state.mkdir(mode=0o777)
    (state / "host-sysctls.before").write_text(f"{LISTED[0]}=0\n")
    os.chown(state, 65534, 65534)
    completed = kind_down(state, fakes)
    assert completed.returncode == 1
    assert "belongs to uid 65534, not to you" in completed.stderr
    assert not log.exists(), "a setting was written from a folder another user controls"


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_the_state_folder_must_be_a_real_folder(tmp_path: Path, kind: str) -> None:
    state = tmp_path / "state"
    if kind == "symlink":
        (tmp_path / "elsewhere").mkdir()
        state.symlink_to(tmp_path / "elsewhere")
    else:
        state.write_text("")
    completed = run(["platform/private-dir", str(state)], {}, fake_bin(tmp_path / "bin", {}))
    assert completed.returncode == 1 and "not a directory of its own" in completed.stderr


def test_the_state_folder_is_made_private_and_a_loose_one_of_ours_closed(tmp_path: Path) -> None:
    fakes = fake_bin(tmp_path / "bin", {})
    made, loose = tmp_path / "a" / "state", tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    for folder in (made, loose):
        assert run(["platform/private-dir", str(folder)], {}, fakes).returncode == 0
        assert folder.stat().st_mode & 0o777 == 0o700


def test_a_user_without_a_runtime_folder_gets_a_state_folder_of_their_own(tmp_path: Path) -> None:
    fakes = fake_bin(
        tmp_path / "bin", {"id": 'if [[ $1 == -u ]]; then echo 1000; else exec /usr/bin/id "$@"; fi'}
    )
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "LAB_STATE_DIR")}
    shown = subprocess.run(
        ["make", "--no-print-directory", "-s", "--eval", "show: ; @echo $(LAB_STATE_DIR)", "show"],
        cwd=REPO_ROOT,
        env={**env, "PATH": f"{fakes}:{env['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    assert shown == "/tmp/concurrency-lab-1000"


@pytest.mark.parametrize(
    ("setting", "resolves", "decision"),
    [
        ("auto", True, "pull: lab-registry.test resolves"),
        ("auto", False, "build: lab-registry.test does not resolve"),
        ("1", False, "pull: LAB_PULL_IMAGES=1"),
        ("0", True, "build: LAB_PULL_IMAGES=0"),
    ],
)
def test_pull_or_build_is_decided_by_the_name_service_alone(
    tmp_path: Path, setting: str, resolves: bool, decision: str
) -> None:
    asked = tmp_path / "asked"
    fakes = fake_bin(tmp_path / "bin", {"getent": f'echo "$*" >>{asked}; exit {0 if resolves else 2}'})
    env = {"LAB_PULL_IMAGES": setting, "LAB_REGISTRY_HOST": "lab-registry.test", "LAB_CACHE": str(tmp_path)}
    completed = run(["scripts/pull-or-build"], env, fakes)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith(decision) and completed.stdout.count("\n") == 1
    assert ("minute" in completed.stdout) and (
        ("25 minutes" in completed.stdout) == decision.startswith("build")
    )
    # The name is asked of the name service only when nothing forces the answer.
    assert (asked.read_text().split() if asked.exists() else []) == (
        ["hosts", "lab-registry.test"] if setting == "auto" else []
    )


def test_a_bad_pull_setting_is_one_line_and_exit_2(tmp_path: Path) -> None:
    completed = run(
        ["scripts/pull-or-build"],
        {"LAB_PULL_IMAGES": "yes", "LAB_CACHE": str(tmp_path)},
        fake_bin(tmp_path / "bin", {}),
    )
    assert (
        completed.returncode == 2
        and completed.stderr.count("\n") == 1
        and "LAB_PULL_IMAGES=yes" in completed.stderr
    )
