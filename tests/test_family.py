"""A new server is one folder plus one values entry, and so is a new app: nothing else is edited.

In a copy of the tree, a new server gets its folder under services/servers/ and a new app its
folder under services/apps/, each a values entry that names it (the server with the lab's FastAPI
app, the app on uvicorn), and nothing else. The copy's own entry point, launcher, contract suite,
chart tests and image list then take both up: its sources go on the path the way the install puts
a checkout's there (services/ and tester/, tests/test_packaging.py shows the install does), ahead
of this checkout's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import yaml

from labtester.targets import DEFAULT_VALUES, REPO_ROOT

SERVER = "minimal"
APP = "minimal_app"
# The smallest server the lab accepts: a package saying which interfaces it serves, which other
# servers' knobs it refuses, and how it serves an app factory. It hands the app to uvicorn's
# serving: what this test proves is the plumbing around a server, not a new HTTP server.
SERVER_FILES = {
    "__init__.py": (
        '"""A minimal server (made by tests/test_family.py)."""\n\n'
        "from servers import uvicorn\n\n"
        "INTERFACES = ('asgi',)\n\n\n"
        "def refused(interface: str) -> str | None:\n"
        "    return None\n\n\n"
        "def serve(factory: str, interface: str, reload_dirs: list[str]) -> None:\n"
        "    uvicorn.serve(factory, 'asgi', reload_dirs)\n"
    ),
    # Its own dependencies (one already installed here, so the suites below can run it).
    "requirements.txt": "# the server it runs on\nuvicorn>=0.30\n",
    # Its own tests, of what the shared suites do not see: collected by `make test` from here.
    "test_minimal.py": (
        "from labtester.targets import load_definitions\n\n\n"
        "def test_its_entry_names_it() -> None:\n"
        "    assert 'minimal' in {d.server for d in load_definitions()}\n"
    ),
}
# The smallest app: its factory per interface, what LAB_RELOAD watches, and its check. It builds
# the lab's FastAPI app: what this test proves is the plumbing around an app.
APP_FILES = {
    "__init__.py": (
        '"""A minimal app (made by tests/test_family.py)."""\n\n'
        "FACTORIES = {'asgi': 'apps.lab_fastapi.app:create_app'}\n"
        "RELOAD_DIRS: list[str] = []\n\n\n"
        "def check() -> tuple[str, str, str]:\n"
        "    return 'asgi', 'fastapi', 'the minimal app'\n"
    ),
    "requirements.txt": "# its framework\nfastapi>=0.115\n",
}
SERVER_ENTRY = {
    "name": "minimal-server",
    "server": SERVER,
    "app": "lab_fastapi",
    "image": "concurrency-lab/minimal-server",
    "localPort": 8098,
    "measure": True,
    "env": {"LAB_WORKERS": "1"},
}
APP_ENTRY = {
    "name": "minimal-app",
    "server": "uvicorn",
    "app": APP,
    "image": "concurrency-lab/minimal-app",
    "localPort": 8099,
    "measure": True,
    "env": {"LAB_WORKERS": "1"},
}
ENTRIES = [SERVER_ENTRY, APP_ENTRY]
# What must take them up: the launcher's definitions, the contract suite, the chart's rendering of
# each target, and the image list.
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


def add_server_and_app(tree: Path) -> None:
    """The server's folder, the app's folder and their values entries: the only changes."""
    for folder, files in (
        (tree / "services" / "servers" / SERVER, SERVER_FILES),
        (tree / "services" / "apps" / APP, APP_FILES),
    ):
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
    values_path = tree / DEFAULT_VALUES.relative_to(REPO_ROOT)
    values = yaml.safe_load(values_path.read_text())
    values["targets"].extend(ENTRIES)
    values_path.write_text(yaml.safe_dump(values, sort_keys=False))


def start_in(tree: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`python *args` in the copy, its sources first on the path; `finish` waits for it."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'services'}:{tree / 'tester'}", **(env or {})}
    pipe = subprocess.PIPE
    return subprocess.Popen([sys.executable, *args], cwd=tree, env=env, stdout=pipe, stderr=pipe, text=True)


def finish(process: subprocess.Popen[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:  # timed out, or the test failed while it ran
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def run_in(
    tree: Path, *args: str, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return finish(start_in(tree, *args, env=env), timeout)


def test_a_new_server_and_a_new_app_each_need_only_their_folder_and_values_entry(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    copy_tree(tree)
    add_server_and_app(tree)
    # The copy's two pytest runs, the slow part (collecting the suite, starting the new targets),
    # run beside the quick checks: nothing of one reads another's.
    report = tmp_path / "report.xml"
    own_run = start_in(tree, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "its_entry_names_it")
    suites_run = start_in(
        tree,
        *("-m", "pytest", "-p", "no:cacheprovider", "-q", "--junitxml", str(report)),
        *("-k", "minimal or test_definitions_come or test_every_image or test_workers_follow or local_labs"),
        *SELECTED,
    )
    try:
        quick_checks(tree)
        # The server's own tests join the suite's (pytest's testpaths), and pass there.
        own = finish(own_run, timeout=300)
        assert "1 passed" in own.stdout, own.stdout[-3000:] + own.stderr[-2000:]
        suites = finish(suites_run, timeout=900)
    finally:
        for process in (own_run, suites_run):
            if process.poll() is None:  # a check above failed: its runs are not waited for
                process.kill()
                process.wait()
    assert suites.returncode == 0, suites.stdout[-6000:] + suites.stderr[-2000:]
    cases = ElementTree.parse(report).getroot().iter("testcase")
    ran = [case.get("name", "") for case in cases if not list(case)]  # no failure, error or skip
    for entry in ENTRIES:
        name = str(entry["name"])
        # Every contract test ran against the new target, and the chart rendered it.
        assert len([case for case in ran if name in case]) >= 20, ran
        assert f"test_target_renders_the_launchers_server[default:{name}]" in ran
    assert {
        "test_definitions_come_from_the_chart_values",
        "test_every_image_the_chart_deploys_is_built_once",
    } <= set(ran)


def quick_checks(tree: Path) -> None:
    """The copy's entry point, install, linting and image list take both up."""
    where = run_in(
        tree,
        "-c",
        f"import labtester.targets, servers.{SERVER}, apps.{APP}; print(labtester.targets.REPO_ROOT)",
        timeout=60,
    )
    assert where.stdout.strip() == str(tree), where.stderr

    # The one entry point finds both by their folders' names.
    for server, app in ((SERVER, "lab_fastapi"), ("uvicorn", APP)):
        checked = run_in(tree, "-m", "serve", app, "check", env={"LAB_SERVER": server}, timeout=60)
        assert json.loads(checked.stdout) == {"interface": "asgi", "framework": "fastapi"}, checked.stderr

    # Their requirements join the install's and the wheelhouse's dependencies (setup.py).
    listed = run_in(tree, "-c", "import setup; print(*setup.requirement_files(), sep='\\n')", timeout=60)
    for folder in (f"servers/{SERVER}", f"apps/{APP}"):
        assert str(tree / "services" / folder / "requirements.txt") in listed.stdout.splitlines(), (
            listed.stderr
        )

    # Linted as first-party code with no list to extend (ruff's src folders).
    lint = run_in(
        tree,
        "-m",
        "ruff",
        "check",
        "--select",
        "I,F",
        f"services/servers/{SERVER}",
        f"services/apps/{APP}",
        timeout=60,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr

    images = run_in(tree, "scripts/image-list", timeout=60).stdout.splitlines()
    for entry in ENTRIES:
        assert f"{entry['image']} services/Dockerfile" in images
