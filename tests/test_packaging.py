"""The installed environment finds new packages under services/ and tester/ without reinstalling."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from labtester.targets import REPO_ROOT
from tests.script_module import load_script


@pytest.mark.parametrize("root", ["services", "tester"])
def test_a_new_package_imports_without_reinstalling(tmp_path: Path, root: str) -> None:
    name = f"lab_probe_{uuid.uuid4().hex[:8]}"
    package = REPO_ROOT / root / name
    package.mkdir()
    try:
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text("print(__spec__.origin)\n")
        # A fresh interpreter of this environment, from elsewhere, with no PYTHONPATH: only what
        # the install put on the path can find it.
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        run = subprocess.run(
            [sys.executable, "-m", name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == str(package / "__main__.py")
    finally:
        shutil.rmtree(package)


def _names(requirements: list[str]) -> list[str]:
    return sorted(str(Requirement(line)) for line in requirements)


def test_every_folders_requirements_are_the_installs_dependencies() -> None:
    """A family's requirements.txt is all it takes for its server to be installed (setup.py reads
    them; `make install` reinstalls when one changes), and images' wheelhouse asks for the same."""
    setup = load_script("setup.py")
    files = setup.requirement_files()
    assert REPO_ROOT / "services" / "workload" / "requirements.txt" in files
    declared = setup.requirements()
    assert declared and not [line for line in declared if line.startswith("#") or " #" in line]
    installed = [r for r in metadata.requires("concurrency-lab") or [] if "extra ==" not in r]
    assert _names(installed) == _names(declared)


def test_a_new_folders_requirements_join_the_list(tmp_path: Path) -> None:
    setup = load_script("setup.py")
    (tmp_path / "services" / "new_target").mkdir(parents=True)
    (tmp_path / "services" / "new_target" / "requirements.txt").write_text(
        "# its server\nserver==1.0  # pinned\n"
    )
    assert setup.requirements(tmp_path) == ["server==1.0"]


def test_the_makefiles_editable_install_prints_nothing(tmp_path: Path) -> None:
    """`make install`'s own commands, into a fresh environment: the venv and its installer, then
    the editable install, all silent (no setuptools box, no pip notice)."""
    venv = tmp_path / "venv"
    command = ["make", "--no-print-directory", "-s", f"VENV={venv}", f"PYTHON={sys.executable}", "--eval"]
    # --eval is read before the Makefile: the installer's rule is named by its path.
    command += [f"probe: {venv}/bin/uv ; $(PIP_INSTALL) --no-deps -e .", "probe"]
    run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout + run.stderr == ""


def test_the_install_is_redone_when_any_folders_requirements_change() -> None:
    """Every requirements.txt setup.py reads (a server's and an app's under services/servers/ and
    services/apps/ too) is a prerequisite of `make install`'s rule, so changing one reinstalls."""
    setup = load_script("setup.py")
    run = subprocess.run(
        ["make", "-pqn", ".venv/.lab-installed"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    rule = next(line for line in run.stdout.splitlines() if line.startswith(".venv/.lab-installed:"))
    prerequisites = set(rule.partition(":")[2].partition("|")[0].split())
    files = {str(path.relative_to(REPO_ROOT)) for path in setup.requirement_files()}
    assert "services/servers/gunicorn/requirements.txt" in files
    assert files <= prerequisites
