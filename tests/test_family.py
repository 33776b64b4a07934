"""A target family is one folder plus one values entry: nothing else in the tree is edited.

In a copy of the tree, a new family gets its folder under services/ and its entry in the chart's
values, and nothing else. The copy's own launcher, contract suite, chart tests and image list
then take it up: its sources go on the path the way the install puts a checkout's there
(services/ and tester/, tests/test_packaging.py shows the install does), ahead of this checkout's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import yaml

from labtester.targets import DEFAULT_VALUES, REPO_ROOT

NAME = "minimal"
MODULE = "minimal_target"
IMAGE = "concurrency-lab/minimal-target"
# The smallest family the lab accepts: a package with a __main__ that serves the contract. It
# serves FastAPI on uvicorn through apps.lab_fastapi's entrypoint: what this test proves is the
# plumbing around a family, not a new server.
FAMILY_FILES = {
    "__init__.py": '"""A minimal target family (made by tests/test_family.py)."""\n',
    "__main__.py": "from apps.lab_fastapi.__main__ import main\n\nif __name__ == '__main__':\n    main()\n",
    # Its own dependencies (one already installed here, so the suites below can run it).
    "requirements.txt": "# the server it runs on\nuvicorn>=0.30\n",
    # Its own tests, of what the shared suites do not see: collected by `make test` from here.
    "test_minimal.py": (
        "from labtester.targets import load_definitions\n\n\n"
        "def test_its_entry_names_it() -> None:\n"
        "    assert 'minimal_target' in {d.module for d in load_definitions()}\n"
    ),
}
ENTRY = {"name": NAME, "module": MODULE, "image": IMAGE, "localPort": 8099, "measure": True}
ENTRY["env"] = {"LAB_WORKERS": "1"}
# What must take the family up: the launcher's definitions, the contract suite, the chart's
# rendering of each target, and the image list.
SELECTED = [
    "tests/tester/test_launcher.py::test_definitions_come_from_the_chart_values",
    "tests/tester/test_targets.py::test_every_image_the_chart_deploys_is_built_once",
    "tests/services/test_contract.py",
    "tests/chart/test_targets.py",
]


def copy_tree(destination: Path) -> None:
    """The checkout's files (tracked and new, as git sees them), without .git, .venv or caches."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    for relative in filter(None, listed.split("\0")):
        source = REPO_ROOT / relative
        if source.is_file():  # a tracked file may be deleted in the working tree
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / relative)


def add_family(tree: Path) -> None:
    """The family's folder and its values entry: the only two changes."""
    package = tree / "services" / MODULE
    package.mkdir()
    for name, text in FAMILY_FILES.items():
        (package / name).write_text(text)
    values_path = tree / DEFAULT_VALUES.relative_to(REPO_ROOT)
    values = yaml.safe_load(values_path.read_text())
    values["targets"].append(ENTRY)
    values_path.write_text(yaml.safe_dump(values, sort_keys=False))


def run_in(tree: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'services'}:{tree / 'tester'}"}
    return subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_a_new_family_needs_only_its_folder_and_values_entry(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    copy_tree(tree)
    add_family(tree)

    where = run_in(
        tree, "-c", f"import labtester.targets, {MODULE}; print(labtester.targets.REPO_ROOT)", timeout=60
    )
    assert where.stdout.strip() == str(tree), where.stderr

    # Its requirements join the install's and the wheelhouse's dependencies (setup.py).
    listed = run_in(tree, "-c", "import setup; print(*setup.requirement_files(), sep='\\n')", timeout=60)
    assert str(tree / "services" / MODULE / "requirements.txt") in listed.stdout.splitlines(), listed.stderr

    # Its own tests join the suite's (pytest's testpaths), and pass there.
    own = run_in(
        tree, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "its_entry_names_it", timeout=300
    )
    assert "1 passed" in own.stdout, own.stdout[-3000:] + own.stderr[-2000:]

    # Linted as first-party code with no list to extend (ruff's src folders).
    lint = run_in(tree, "-m", "ruff", "check", "--select", "I,F", f"services/{MODULE}", timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    images = run_in(tree, "scripts/image-list", timeout=60)
    assert f"{IMAGE} services/Dockerfile {MODULE}" in images.stdout.splitlines(), images.stderr

    report = tmp_path / "report.xml"
    suites = run_in(
        tree,
        *("-m", "pytest", "-p", "no:cacheprovider", "-q", "--junitxml", str(report)),
        *("-k", f"{NAME} or test_definitions_come or test_every_image or test_workers_follow or local_labs"),
        *SELECTED,
        timeout=900,
    )
    assert suites.returncode == 0, suites.stdout[-6000:] + suites.stderr[-2000:]
    cases = ElementTree.parse(report).getroot().iter("testcase")
    ran = [case.get("name", "") for case in cases if not list(case)]  # no failure, error or skip
    for_family = [name for name in ran if NAME in name]
    # Every contract test ran against the new target, and the chart rendered it.
    assert len(for_family) >= 20, for_family
    assert f"test_target_renders_the_launchers_server[default:{NAME}]" in ran
    assert {
        "test_definitions_come_from_the_chart_values",
        "test_every_image_the_chart_deploys_is_built_once",
    } <= set(ran)
