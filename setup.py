"""The lab's dependencies, each from the folder that needs it: services/workload/requirements.txt
(what every target shares), services/servers/<name>/requirements.txt (a server) and
services/apps/<name>/requirements.txt (an app's framework). A new server or app brings its own in
its folder; the install (`make install`), the
images' wheelhouse (`make wheelhouse`) and the images all read this list. The rest of the project's
metadata is in pyproject.toml."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def requirement_files(root: Path = ROOT) -> list[Path]:
    return sorted(root.glob("services/**/requirements.txt"))


def requirements(root: Path = ROOT) -> list[str]:
    """Every requirement line of every folder's requirements.txt (comments and blank lines left out)."""
    lines = (
        line.split("#", 1)[0].strip()
        for path in requirement_files(root)
        for line in path.read_text().splitlines()
    )
    return [line for line in lines if line]


if __name__ == "__main__":
    setup(install_requires=requirements())
