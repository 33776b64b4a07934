"""The helper interpreter of tests/forked_cli.py: `python -P forked_cli_helper.py MODULE...` imports
the MODULEs, then for each request read from stdin (one JSON line: module, argv, env, cwd) forks,
and the child runs `python -m module *argv` as a fresh interpreter would, its output in files;
the answer is one JSON line on stdout (returncode, stdout, stderr). Single-threaded, so a fork
copies nothing half-done."""

from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import tempfile
import traceback
from typing import Any

# The installed packages' part of the path (started with -P: nothing before it), what `python -m`
# puts after the cwd and PYTHONPATH.
INSTALLED_PATH = list(sys.path)


def exit_code(exit: SystemExit) -> int:
    """The status an interpreter ends with on this SystemExit (a message goes to stderr, status 1)."""
    if exit.code is None or isinstance(exit.code, int):
        return exit.code or 0
    print(exit.code, file=sys.stderr)
    return 1


def run_as_main(request: dict[str, Any], out: int, err: int) -> None:
    """In the child: become `python -m module *argv` in cwd with env, then exit with its status."""
    code = 1
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the requests' pipe is not the command's stdin
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        python_path = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.path[:] = [os.getcwd(), *python_path, *INSTALLED_PATH]
        importlib.invalidate_caches()
        sys.argv = [request["module"], *request["argv"]]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit:
        code = exit_code(exit)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve_one(request: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            run_as_main(request, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        texts = []
        for file in (out, err):
            file.seek(0)
            texts.append(file.read().decode(errors="replace"))
    return {"returncode": os.waitstatus_to_exitcode(status), "stdout": texts[0], "stderr": texts[1]}


def main() -> None:
    for module in sys.argv[1:]:
        importlib.import_module(module)
        if module.endswith(".__main__"):  # its imports stay; each run executes it anew, as __main__
            del sys.modules[module]
    for line in sys.stdin:
        print(json.dumps(serve_one(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
