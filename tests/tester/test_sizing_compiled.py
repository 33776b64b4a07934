"""The sizing's simulation compiled (labtester/sizing/compiled.py, `make compiled`): the very runs
the sources make, to the last bit, and used only where it was built from the sources as they are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labtester.sizing import compiled
from labtester.sizing.configuration import Configuration
from labtester.sizing.kinds import RequestKind
from labtester.sizing.model import simulate, sustained_p99
from labtester.sizing.proof import proof_run

ROOT = Path(__file__).resolve().parents[2]


def cases() -> list[str]:
    """Runs across every part of the model: each family's slots and queues, spreads, a company
    curve, work beside a loop, a local client, a sync worker's close, a floor, proof draws, full
    collections that stop their process."""
    heavy = RequestKind("/cpu", 1, 0.02, 0.0, 0.0004, cpu_spread_s=tuple(0.01 + 0.001 * i for i in range(20)))
    waits = RequestKind(
        "/io", 2, 0.001, 0.05, 0.0003, wait_spread_s=tuple(0.03 + 0.002 * i for i in range(20))
    )
    curve = ((0.0, 0.004), (2.0, 0.006), (8.0, 0.011))
    crowded = RequestKind(
        "/c", 1, 0.005, 0.01, 0.0002, cpu_spread_s=(0.004, 0.005, 0.006), cpu_by_company=curve
    )
    beside = RequestKind("/t", 1, 0.008, 0.02, 0.0003, cores_per_process=1.4, elsewhere_share=0.7)
    light = RequestKind("/l", 3, 0.0003, 0.0, 0.0002, client_s=0.0001, close_s=0.0002)
    collecting = RequestKind(
        "/g", 1, 0.002, 0.01, 0.0002, full_collections_per_request=0.05, full_collection_cpu_s=0.02
    )
    configurations = [
        Configuration("sync", 3, 1, "shared", True),
        Configuration("gthread", 2, 4, "per_worker", True),
        Configuration("gevent", 2, 100, "per_worker", False),
        Configuration("uvicorn", 2, None, "per_worker", False, threads_beside=True),
    ]
    mixes = [[heavy, waits], [crowded, waits], [beside, waits, light], [light], [collecting, waits, light]]
    runs = []
    for config in configurations:
        for mix in mixes:
            runs.append(repr(simulate(mix, config, 2.0, 40.0, 600, floor_s=(0.0, 0.001, 0.003))))
        runs.append(repr(proof_run(mixes[0], config, 2.0, 30.0, 20.0, 400, 4.0)))
        runs.append(repr(sustained_p99(mixes[2], config, 1.5, 50.0, 8.0)))
    return runs


@pytest.mark.skipif(not compiled.active(), reason="not compiled from these sources here: make compiled")
def test_the_compiled_simulation_runs_as_its_sources_do_to_the_last_bit() -> None:
    script = "import json, tests.tester.test_sizing_compiled as t; print(json.dumps(t.cases()))"
    as_python = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "LAB_SIMULATION": "python"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(as_python.stdout) == cases()


def test_ci_compiles_the_simulation() -> None:
    if os.environ.get("CI") != "true":
        pytest.skip("only CI promises a C compiler and `make compiled` before the tests")
    assert compiled.active()


def test_the_compiled_modules_are_used_only_where_built_from_the_sources_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "compiled" / "labtester" / "sizing"
    folder.mkdir(parents=True)
    monkeypatch.setattr(compiled, "built_in", lambda: folder)
    monkeypatch.delenv("LAB_SIMULATION", raising=False)
    path = ["/the/sources"]
    assert compiled.search_path(path) == path  # never built
    built = compiled.digests(compiled.sources())
    for changed in built:  # built from another version of any one source
        (folder / compiled.STAMP).write_text(json.dumps({**built, changed: "0" * 64}))
        assert compiled.search_path(path) == path, changed
    one_short = {name: digest for name, digest in built.items() if not name.endswith("/events.py")}
    (folder / compiled.STAMP).write_text(json.dumps(one_short))
    assert compiled.search_path(path) == path  # a module of the simulation not in the build
    (folder / compiled.STAMP).write_text(json.dumps(built))
    assert compiled.search_path(path) == [str(folder), *path]
    monkeypatch.setenv("LAB_SIMULATION", "python")
    assert compiled.search_path(path) == path


def test_a_build_is_made_of_the_simulation_and_the_lab_modules_it_imports() -> None:
    # Their constants and types are compiled in: a change to any of them is a build from others.
    names = {str(path.relative_to(compiled.ROOT)) for path in compiled.sources()}
    assert {f"labtester/sizing/{name}.py" for name in compiled.MODULES} < names
    assert {"labtester/sizing/document.py", "labtester/load.py"} <= names  # model's and overlap's
