"""`make lab`'s knobs reach the lab as arguments, exactly as typed (quotes, `$`, commas, spaces),
never as shell text; a knob set only in the environment (an exported APP) leaves a plain `make lab`
the lab's own; and the recipe itself is not echoed before the lab's output.

The lab is the real one: each command here is refused by its input checks (one line naming the
input as it arrived, exit 2), which come before anything starts, so the line says what arrived.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from labtester.targets import REPO_ROOT

# What a shell or make would take for its own: quotes of both kinds, `$` (make's and the shell's),
# a command substitution, a glob, a comma, spaces and a semicolon.
HOSTILE = "x'y\"z $HOME $$x $(y) `id` * ,a b;c"


def make(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Without MAKEFLAGS: pytest run by `make test` must not pass its own variables down.
    base = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS")}
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=REPO_ROOT,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The lab's one line: exit 2, nothing started."""
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("labtester ")]
    return line


def test_an_app_arrives_exactly_as_typed() -> None:
    result = make("lab", f"APP=no_such_module{HOSTILE}:app", "PATHS=/a")
    assert f"--app no_such_module{HOSTILE}:app:" in refused(result)
    assert result.stdout == ""  # no recipe echoed, no shell's own complaint


def test_paths_and_every_other_knob_arrive_exactly_as_typed() -> None:
    # The same paths twice: refused, naming them as the lab split what arrived at its commas.
    result = make("lab", "APP=examples.shop.flask_app:app", f"PATHS=/a?q={HOSTILE},/a?q={HOSTILE}")
    twice = [f"/a?q={HOSTILE.split(',')[0].strip()}", HOSTILE.split(",")[1]]
    assert f"paths given twice: {sorted(twice)!r}" in refused(result)
    for knob, flag in [
        ("N", "--work-seconds"),
        ("K", "--burst-max"),
        ("R", "--repeats"),
        ("CLIENTS", "--clients"),
    ]:
        line = refused(make("lab", f"{knob}=1{HOSTILE}"))
        assert f"argument {flag}: invalid" in line and repr(f"1{HOSTILE}") in line
    assert repr(HOSTILE.strip()) in refused(make("lab", f"SCENARIOS={HOSTILE}"))
    assert f"--compare {HOSTILE}" in refused(make("lab", f"COMPARE={HOSTILE}"))
    traffic = refused(make("lab", "APP=examples.shop.flask_app:app", f"TRAFFIC=/no/such/{HOSTILE}.yaml"))
    assert f"--traffic: /no/such/{HOSTILE}.yaml: cannot be read" in traffic


@pytest.mark.parametrize(
    "exported", [{"APP": "no_such_module:app"}, {"APP": "no_such_module:app", "PATHS": "/a"}]
)
def test_a_knob_only_in_the_environment_leaves_make_lab_its_own(exported: dict[str, str]) -> None:
    # A plain lab's first refusal is the earlier run to compare with; an app lab's would be the app.
    line = refused(make("lab", "COMPARE=/no/such/run", env=exported))
    assert "--compare /no/such/run" in line and "app" not in line


def test_what_make_runs_keeps_pythons_bytecode_cache_even_where_the_environment_says_not_to() -> None:
    # An environment that forbids the cache (this project's machines do) would make every server a
    # test or lab starts compile the lab and its libraries again: about 0.8 s of CPU each.
    probe = "probe: ; @python3 -c 'import sys; print(sys.dont_write_bytecode)'"
    result = make("--eval", probe, "probe", env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
