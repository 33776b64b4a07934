"""The simulation compiled with mypyc (`make compiled`, run by `make test`, `make bench` and an app's
`make lab`): the very sources of MODULES built into C extensions in the venv, which
labtester.sizing's import path puts first where they were built from the sources as they are now.
The same runs to the last bit (tests/tester/test_sizing_compiled.py), in 0.38x the search's CPU
on the Flask shop's light path (4.41 s -> 1.69 s, the same plan). Without them (no C compiler, an
image's venv, LAB_SIMULATION=python, a source edited since the build) the sources run as Python."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

# The simulation's inner loop and all it calls per request (the search and the plan stay Python).
MODULES = (
    "arrivals",
    "configuration",
    "drawn",
    "events",
    "kinds",
    "model",
    "overlap",
    "processes",
    "quantiles",
)
SOURCES = Path(__file__).resolve().parent
STAMP = "sources.json"  # beside the extensions: the digest of each source they were built from


def built_in(prefix: str | None = None) -> Path:
    """Where the extensions are built: the environment's own (the venv's), as they fit its Python."""
    return Path(prefix or sys.prefix, "compiled", "labtester", "sizing")


def digests() -> dict[str, str]:
    return {name: hashlib.sha256((SOURCES / f"{name}.py").read_bytes()).hexdigest() for name in MODULES}


def search_path(path: list[str]) -> list[str]:
    """The package's import path with the compiled modules' folder first, where they were built
    from these sources (else as it is: Python runs the sources)."""
    folder = built_in()
    if os.environ.get("LAB_SIMULATION") == "python":
        return path
    try:
        built = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return path
    return [str(folder), *path] if built == digests() else path


def active() -> bool:
    """Whether the simulation that runs (or would) is the compiled one."""
    spec = find_spec("labtester.sizing.events")
    return spec is not None and spec.origin is not None and not spec.origin.endswith(".py")


def simulation_label() -> str:
    """How the simulation runs, for the figures of its cost (`make bench`)."""
    return "the simulation compiled" if active() else "the simulation as Python: `make compiled`"


def build() -> None:
    """Compile MODULES into built_in() (mypyc and a C compiler: the `compile` extra), then stamp."""
    from mypyc.build import mypycify
    from setuptools import setup

    target = built_in()
    stamp = target / STAMP
    stamp.unlink(missing_ok=True)  # a failed build leaves none: the sources run
    root = SOURCES.parents[2]
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(root)  # mypy reads the project's settings (pyproject.toml) where it runs
        paths = [str((SOURCES / f"{name}.py").relative_to(root)) for name in MODULES]
        extensions = mypycify(paths, group_name="labtester.sizing.simulation", target_dir=scratch)
        quiet = ["build_ext", "--quiet", "--build-lib", str(target.parents[1]), "--build-temp", scratch]
        # mypyc declares its extensions as distutils' or setuptools'; setuptools builds either
        setup(name="labtester-simulation", ext_modules=extensions, script_args=quiet)  # type: ignore[arg-type]
    stamp.write_text(json.dumps(digests(), indent=1) + "\n")


if __name__ == "__main__":
    build()
