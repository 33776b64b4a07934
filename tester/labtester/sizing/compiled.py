"""The simulation compiled with mypyc (`make compiled`, run by `make test`, `make bench` and an app's
`make lab`): the very sources of MODULES built into C extensions in the venv, which
labtester.sizing's import path puts first where they were built from the sources as they are now.
The same runs to the last bit (tests/tester/test_sizing_compiled.py), in 0.20-0.24x the CPU of
the sources run as Python (a light path's search, the Flask shop's /products/7: 0.78-0.89 s
against 3.63-4.06). Without them (no C compiler, an image's venv, LAB_SIMULATION=python, a source
edited since the build) the sources run."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
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
ROOT = SOURCES.parents[1]  # tester/: module paths are named from here (labtester/sizing/events.py)
# Beside the extensions: the digest of each source they were built from, MODULES and the lab's
# modules they import (whose constants and types are compiled in); and of those a build failed on.
STAMP = "sources.json"
FAILED = "failed.json"


def built_in(prefix: str | None = None) -> Path:
    """Where the extensions are built: the environment's own (the venv's), as they fit its Python."""
    return Path(prefix or sys.prefix, "compiled", "labtester", "sizing")


def log_file() -> Path:
    return built_in().parents[1] / "build.log"


def sources() -> list[Path]:
    """MODULES' files and the files of the lab's modules they import."""
    files = {SOURCES / f"{name}.py" for name in MODULES}
    for file in sorted(files):
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labtester."):
                module = ROOT.joinpath(*str(node.module).split("."))
                files.add(
                    module.with_suffix(".py")
                    if module.with_suffix(".py").exists()
                    else module / "__init__.py"
                )
    return sorted(files)


def digests(files: list[Path]) -> dict[str, str]:
    return {str(f.relative_to(ROOT)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def _matches(stamp: Path) -> bool:
    """Whether the stamp names every module of MODULES and each of its files is as it was then."""
    try:
        built: dict[str, str] = json.loads(stamp.read_text())
        now = digests([ROOT / name for name in built])
    except (OSError, ValueError, TypeError):
        return False
    return built == now and all(f"labtester/sizing/{name}.py" in built for name in MODULES)


def search_path(path: list[str]) -> list[str]:
    """The package's import path with the compiled modules' folder first, where they were built
    from these sources (else as it is: Python runs the sources)."""
    folder = built_in()
    if os.environ.get("LAB_SIMULATION") == "python" or not _matches(folder / STAMP):
        return path
    return [str(folder), *path]


def active() -> bool:
    """Whether the simulation that runs (or would) is the compiled one."""
    spec = find_spec("labtester.sizing.events")
    return spec is not None and spec.origin is not None and not spec.origin.endswith(".py")


def simulation_label() -> str:
    """How the simulation runs, for the figures of its cost (`make bench`)."""
    return "the simulation compiled" if active() else "the simulation as Python: `make compiled`"


def build() -> bool:
    """Compile MODULES into built_in() (mypyc and a C compiler: the `compile` extra) afresh, and
    stamp it with the sources as they were before it began (one edited meanwhile leaves it unused)."""
    from mypyc.build import mypycify
    from setuptools import setup

    target, before = built_in(), digests(sources())
    shutil.rmtree(target, ignore_errors=True)  # no module of another build stays beside these
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as scratch, log_file().open("w") as log:
        os.chdir(ROOT.parent)  # mypy reads the project's settings (pyproject.toml) where it runs
        saved = os.dup(1), os.dup(2)
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)  # the compiler's lines too, from its own processes
        try:
            paths = [str((SOURCES / f"{name}.py").relative_to(ROOT.parent)) for name in MODULES]
            extensions = mypycify(paths, group_name="labtester.sizing.simulation", target_dir=scratch)
            for extension in extensions:  # no fused multiply-adds: the sources' rounding, on any CPU
                extension.extra_compile_args = [*extension.extra_compile_args, "-ffp-contract=off"]
            quiet = ["build_ext", "--quiet", "--build-lib", str(target.parents[1]), "--build-temp", scratch]
            # mypyc declares its extensions as distutils' or setuptools'; setuptools builds either
            setup(name="labtester-simulation", ext_modules=extensions, script_args=quiet)  # type: ignore[arg-type]
        except (Exception, SystemExit):  # setuptools exits where the compiler failed
            (target / FAILED).write_text(json.dumps(before, indent=1) + "\n")
            return False
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
    (target / STAMP).write_text(json.dumps(before, indent=1) + "\n")
    return True


def main() -> None:
    """`make compiled`: build where the sources changed since the last build, or the last failure."""
    target = built_in()
    if _matches(target / STAMP):
        return
    if _matches(target / FAILED):
        print(f"The sizing's simulation runs as Python (its build failed on these sources: {log_file()})")
        return
    print(f"Compiling the sizing's simulation (mypyc, about 40 s; log: {log_file()})", flush=True)
    if not build():
        print(
            f"Not compiled (a C compiler? {log_file()}): the sizing's simulation runs as Python, 4x its CPU"
        )


if __name__ == "__main__":
    main()
