"""`python -m MODULE ARGS` run many times for the price of one interpreter's start: a helper
interpreter imports the libraries once, then runs each command in a fork of itself, as the
command's own `__main__`, with its own argv, environment, working directory and output.

A test module that feeds dozens of bad inputs to a command line (each refused in milliseconds)
spent most of its CPU starting Python and importing the same libraries again for each: about a
second each. What runs is the command's real entrypoint, from the start of its `__main__`; only
the interpreter's start-up and the imports named up front are shared. As `python -m` does, each
run's path starts with its working directory, then its PYTHONPATH, then the installed packages.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from types import TracebackType

HELPER = Path(__file__).with_name("forked_cli_helper.py")


class ForkedCommands:
    """A helper interpreter with `preload` imported, serving runs of `python -m MODULE` one at a
    time (`run`); closed with its context."""

    def __init__(self, preload: list[str], env: dict[str, str]) -> None:
        helper_env = {key: value for key, value in env.items() if key != "PYTHONPATH"}
        self.process = subprocess.Popen(
            # -P: not the helper's folder first on its path (tests/ holds packages named like the
            # standard library's: tests/platform)
            [sys.executable, "-P", str(HELPER), *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=helper_env,
            text=True,
        )

    def __enter__(self) -> ForkedCommands:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def run(
        self, module: str, argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """What `python -m module *argv` in `cwd` with exactly `env` returns and prints."""
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"module": module, "argv": argv, "env": env, "cwd": str(cwd)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        if not ready:
            self.process.kill()
            raise subprocess.TimeoutExpired([module, *argv], timeout_s)
        line = self.process.stdout.readline()
        assert line, f"the helper interpreter ended (exit code {self.process.wait()})"
        answer = json.loads(line)
        return subprocess.CompletedProcess(
            [sys.executable, "-m", module, *argv], answer["returncode"], answer["stdout"], answer["stderr"]
        )
