"""Every bad input, fed to the real command line: one line naming it and the reason, exit 2, no
traceback, and nothing started (no target, no connection to one), whatever the subcommand.

Each bad input runs `python -m labtester`'s own `__main__` in a fork of one interpreter that
imported the lab once (tests/forked_cli.py): refused in milliseconds, each had cost a second of
CPU to start Python and import the lab again. The good input's run is a whole new interpreter.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.forked_cli import ForkedCommands

# A target that only says it was started: if it ever runs, a check came too late. It stands in for
# every target's entrypoint (`python -m serve <app>`), ahead of it on PYTHONPATH.
PROBE_MODULE = "import os, pathlib\npathlib.Path(os.environ['PROBE_STARTED']).touch()\n"


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Good values naming the probe target, and the bad files the cases below refer to."""
    root = tmp_path_factory.mktemp("inputs")
    (root / "serve.py").write_text(PROBE_MODULE)
    entry = {"name": "probe", "server": "uvicorn", "app": "probe_app", "image": "x", "localPort": 0}
    files = {
        "values.yaml": {"targets": [entry]},
        "no-targets.yaml": {"image": {"tag": "x"}},
        "no-app.yaml": {"targets": [{"name": "probe", "localPort": 0}]},
        "empty-targets.yaml": {"targets": []},
        "census-only.yaml": {"targets": [{**entry, "measure": False}]},
        "list.yaml": ["work_seconds", 1],
        "targets-notalist.yaml": {"targets": "notalist"},
        "typo.yaml": {"work_second": 1},
        "infinite.yaml": {"request_timeout_s": ".inf"},
    }
    for name, content in files.items():
        (root / name).write_text(yaml.safe_dump(content))
    (root / "infinite.yaml").write_text("request_timeout_s: .inf\n")
    (root / "not-yaml.yaml").write_text("work_seconds: [1\n")
    (root / "a-file").write_text("")
    (root / "empty-run").mkdir()
    (root / "empty-run" / "raw.jsonl").write_text("")
    (root / "no-run").mkdir()
    (root / "a-run").mkdir()
    (root / "a-run" / "raw.jsonl").write_text('{"type": "run_start"}\n')
    (root / "broken-results").mkdir()
    (root / "broken-results" / "results.json").write_text('{"schema_version": 3, "run": ')
    return root


def lab_environment(place: Path, started: Path) -> dict[str, str]:
    """This environment without the lab's own settings, with the probe target first on the path."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("TESTER_", "LAB_"))}
    return environment | {"PYTHONPATH": str(place), "PROBE_STARTED": str(started)}


@pytest.fixture(scope="module")
def commands(place: Path) -> Iterator[ForkedCommands]:
    with ForkedCommands(["labtester.__main__"], lab_environment(place, place / "unused")) as forked:
        yield forked


@pytest.fixture(scope="module")
def listener() -> Iterator[socket.socket]:
    """A port `run` would measure: it must never be connected to."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


LAB = ["--values", "values.yaml"]
# (command line, environment, what the one line must name)
CASES = [
    (["lab", "--config", "missing.yaml", *LAB], {}, "--config missing.yaml: cannot be read"),
    (["lab", "--config", "not-yaml.yaml", *LAB], {}, "not YAML (line 2"),
    (["lab", "--config", "list.yaml", *LAB], {}, "holds a list"),
    (["lab", "--config", "targets-notalist.yaml", *LAB], {}, "targets in targets-notalist.yaml"),
    (["lab", "--config", "typo.yaml", *LAB], {}, "work_second in typo.yaml: Extra inputs"),
    (["lab", "--config", "infinite.yaml", *LAB], {}, "request_timeout_s in infinite.yaml: must be a finite"),
    (["lab", "--values", "no-targets.yaml"], {}, "no-targets.yaml: has no `targets` list"),
    (["lab", "--values", "no-app.yaml"], {}, "targets[0] (probe): app: Field required"),
    (["lab", "--values", "empty-targets.yaml"], {}, "holds no measured target"),
    (["bench", "--values", "census-only.yaml"], {}, "holds no measured target"),
    (["lab", "--output", "a-file/results", *LAB], {}, "--output a-file/results: cannot write there"),
    (["lab", *LAB], {"TESTER_OUTPUT_DIR": "a-file/x"}, "TESTER_OUTPUT_DIR a-file/x: cannot write"),
    (["lab", "--work-seconds", "-1", *LAB], {}, "--work-seconds: Input should be greater than 0"),
    (["lab", "--work-seconds", "x", *LAB], {}, "--work-seconds: invalid float value"),
    (["lab", "--scenarios", ",", *LAB], {}, "--scenarios: no load shape named"),
    (["lab", *LAB], {"TESTER_SWEEP__LEVELS": "junk"}, "TESTER_SWEEP__LEVELS: not JSON"),
    (["lab", *LAB], {"TESTER_READY_TIMEOUT_S": "inf"}, "TESTER_READY_TIMEOUT_S: must be a finite number"),
    (["lab", *LAB], {"TESTER_ENDPOINTS": " , "}, "TESTER_ENDPOINTS: no endpoint named"),
    (["lab", *LAB], {"TESTER_WORK_SECOND": "1"}, "TESTER_WORK_SECOND: no such setting; did you mean"),
    (["lab", *LAB], {"TESTER_TARGETS": "a=http://x"}, "TESTER_TARGETS: `lab` starts the targets"),
    (["lab", "--compare", "no-run", *LAB], {}, "--compare no-run is not a results folder"),
    (["lab", "--compare", "broken-results", *LAB], {}, "results.json is no results document"),
    (["bench", "--work-seconds", "0", *LAB], {}, "--work-seconds: Input should be greater than 0"),
    (["lab", "--cores", "-2", *LAB], {}, "--cores: Input should be greater than 0"),
    (["lab", "--cores", "two", *LAB], {}, "--cores: Input should be a valid number"),
    (
        ["lab", "--memory", "lots", *LAB],
        {},
        "--memory: not a memory size (bytes, or 512Mi, 1Gi, 2G) (got 'lots')",
    ),
    (
        ["lab", "--memory=-1Gi", *LAB],
        {},
        "--memory: not a memory size (bytes, or 512Mi, 1Gi, 2G) (got '-1Gi')",
    ),
    (["lab", "--p99", "0", *LAB], {}, "--p99: Input should be greater than 0"),
    (["lab", "--rate", "fast", *LAB], {}, "--rate: Input should be a valid number"),
    (["lab", *LAB], {"TESTER_TARGET_RATE": "-5"}, "TESTER_TARGET_RATE: Input should be greater than 0"),
    (["report", "no-such-run"], {}, "no-such-run: no such folder"),
    (["report", "no-run"], {}, "no-run: no run's folder"),
    (["report", "empty-run"], {}, "empty-run/raw.jsonl: does not start with a run"),
    (["report", "a-run", "--compare", "broken-results"], {}, "--compare broken-results"),
    (["targets", *LAB, "--port", "probe=99999"], {}, "--port probe=99999: takes NAME=PORT"),
    (["targets", *LAB, "--port", "nobody=9000"], {}, "no measured target or downstream named 'nobody'"),
    (["targets", "--values", "no-app.yaml"], {}, "app: Field required"),
    (["run"], {"TESTER_TARGETS": ""}, "no targets: set TESTER_TARGETS"),
    (["run", "--scenarios", ","], {}, "--scenarios: no load shape named"),
    (["run", "--config", "typo.yaml"], {}, "work_second in typo.yaml"),
    (["run"], {"TESTER_TARGETS": "nourl"}, "TESTER_TARGETS: target 'nourl' is not NAME=URL"),
    (["run"], {"TESTER_SIZING__VALUES": "absent.yaml"}, "TESTER_SIZING__VALUES: absent.yaml: cannot be read"),
]


@pytest.mark.parametrize(("argv", "env", "named"), CASES, ids=[" ".join(c[0]) + str(c[1]) for c in CASES])
def test_a_bad_input_is_one_line_and_exit_2_before_anything_starts(
    place: Path,
    listener: socket.socket,
    commands: ForkedCommands,
    argv: list[str],
    env: dict[str, str],
    named: str,
) -> None:
    started = place / "probe-started"
    environment = lab_environment(place, started)
    if argv[0] == "run" and "TESTER_TARGETS" not in env:
        environment["TESTER_TARGETS"] = f"probe=http://127.0.0.1:{listener.getsockname()[1]}"
    began = time.perf_counter()
    completed = commands.run("labtester", argv, environment | env, place)
    elapsed = time.perf_counter() - began
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert completed.stdout == "" and completed.stderr.count("\n") == 1, completed.stderr
    assert named in completed.stderr and "Traceback" not in completed.stderr
    # Nothing started: no target ran, `run` never connected to its target.
    assert not started.exists(), f"a target started before the error ({elapsed:.1f} s)"
    with pytest.raises(BlockingIOError):
        listener.accept()


@pytest.mark.parametrize("way", ["interpreter", "fork"])
def test_the_same_command_with_good_inputs_does_start_the_probe(
    place: Path, commands: ForkedCommands, way: str
) -> None:
    """The probe is a real witness, in a fresh interpreter as in the forks the bad inputs run in:
    with nothing wrong, the lab starts it (and reports it dead)."""
    started = place / f"probe-started-{way}"
    environment = lab_environment(place, started)
    argv = ["lab", *LAB, "--output", str(place / f"results-{way}")]
    if way == "fork":
        completed = commands.run("labtester", argv, environment, place, timeout_s=120)
    else:
        command = [sys.executable, "-m", "labtester", *argv]
        completed = subprocess.run(
            command, cwd=place, env=environment, capture_output=True, text=True, timeout=120
        )
    assert started.exists() and completed.returncode != 0
    assert "probe exited" in completed.stdout + completed.stderr
