"""The installed environment finds new packages under services/ and tester/ without reinstalling."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from labtester.targets import REPO_ROOT


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


def test_the_makefiles_editable_install_prints_nothing(tmp_path: Path) -> None:
    """`make install`'s own pip command, into a fresh environment: silent (no setuptools box)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    command = ["make", "--no-print-directory", "-s", f"VENV={venv}", "--eval"]
    command += ["probe: ; $(PIP_INSTALL) --no-deps -e .", "probe"]
    run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout + run.stderr == ""
