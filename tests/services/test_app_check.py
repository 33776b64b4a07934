"""`python -m serve team check` and a bad LAB_APP: one line of JSON for an app it can serve; one
clear line naming LAB_APP and exit 2 for one it cannot, also when asked to serve it.

Each runs `python -m serve`'s own `__main__` in a fork of one interpreter that imported the
servers' and apps' libraries once (tests/forked_cli.py): each fresh interpreter had cost most of
a second of CPU, to answer in milliseconds.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from labtester.targets import REPO_ROOT
from tests.forked_cli import ForkedCommands
from tests.services.apps import BARE_MODULE, bare_app_dir

# What every check imports (the frameworks of the apps below, the settings' library): once.
PRELOAD = ["pydantic", "pydantic_settings", "fastapi", "flask"]

BAD_APPS = """
def not_an_app(environ):
    return []

class Handler:
    def __call__(self, environ, start_response):
        return []

handler_class = Handler
not_callable = 42

def broken():
    raise RuntimeError("no configuration")
"""


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = bare_app_dir(tmp_path_factory.mktemp("apps"))
    (directory / "lab_bad_apps.py").write_text(BAD_APPS)
    (directory / "lab_raising_app.py").write_text('raise ValueError("the settings file is missing")\n')
    (directory / "lab_missing_dependency.py").write_text("import lab_not_installed_anywhere\n")
    (directory / "lab_noisy_app.py").write_text(
        f'print("hello from the import")\nfrom {BARE_MODULE} import wsgi\n'
    )
    return directory


@pytest.fixture(scope="module")
def commands() -> Iterator[ForkedCommands]:
    with ForkedCommands(PRELOAD, dict(os.environ)) as forked:
        yield forked


def serve_team(
    commands: ForkedCommands, app_dir: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": f"{app_dir}{os.pathsep}{REPO_ROOT}", **env}
    return commands.run("serve", ["team", *args], environment, Path.cwd())


@pytest.mark.parametrize(
    ("app", "interface", "framework"),
    [
        (f"{BARE_MODULE}:wsgi", "wsgi", "wsgi"),
        (f"{BARE_MODULE}:asgi", "asgi", "asgi"),
        ("lab_noisy_app:wsgi", "wsgi", "wsgi"),  # what an app prints at import does not spoil the line
        ("examples.shop.flask_app:app", "wsgi", "flask"),
        ("examples.shop.fastapi_app:app", "asgi", "fastapi"),
        ("examples.shop.flask_app:app.wsgi_app", "wsgi", "flask"),
    ],
)
def test_check_prints_one_line(
    commands: ForkedCommands, app_dir: Path, app: str, interface: str, framework: str
) -> None:
    checked = serve_team(commands, app_dir, "check", LAB_APP=app)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout) == {"interface": interface, "framework": framework}
    assert len(checked.stdout.splitlines()) == 1


BAD = [
    ("lab_nowhere:app", {}, "no module named lab_nowhere"),
    ("lab_missing_dependency:app", {}, "importing lab_missing_dependency raised ModuleNotFoundError"),
    ("lab_raising_app:app", {}, "importing lab_raising_app raised ValueError: the settings file is missing"),
    (f"{BARE_MODULE}:nope", {}, f"{BARE_MODULE} has no attribute nope"),
    ("lab_bad_apps:not_an_app", {}, "the function not_an_app is neither an ASGI app"),
    ("lab_bad_apps:handler_class", {}, "the class Handler is neither"),
    ("lab_bad_apps:not_callable", {}, "an object of type int is neither"),
    ("lab_bad_apps:broken()", {}, "calling broken() raised RuntimeError: no configuration"),
    (f"{BARE_MODULE}:asgi", {"LAB_SERVER": "gunicorn"}, "LAB_SERVER=gunicorn serves only WSGI apps"),
    (f"{BARE_MODULE}:wsgi", {"LAB_SERVER": "uvicorn"}, "LAB_SERVER=uvicorn serves only ASGI apps"),
    (f"{BARE_MODULE}:asgi", {"LAB_WORKER_CLASS": "gthread"}, "LAB_WORKER_CLASS=gthread is a gunicorn worker"),
    (f"{BARE_MODULE}:wsgi", {"LAB_INTERFACE": "asgi"}, "LAB_INTERFACE=asgi: LAB_APP="),
    # A bad value of the server's own knob: one line before anything starts, as any other.
    (f"{BARE_MODULE}:wsgi", {"LAB_WORKER_CLASS": "gthread", "LAB_THREADS": "0"}, "LAB_THREADS: Input"),
    (
        f"{BARE_MODULE}:wsgi",
        {"LAB_SERVER": "granian", "LAB_WORKER_CLASS": "gevent"},
        "LAB_WORKER_CLASS=gevent: a gunicorn worker class, not granian's",
    ),
    (
        f"{BARE_MODULE}:asgi",
        {"LAB_SERVER": "granian", "LAB_THREADS": "4"},
        "LAB_THREADS=4: granian runs an ASGI app on its worker's one event loop",
    ),
    (f"{BARE_MODULE}:wsgi", {"LAB_MAX_IN_FLIGHT": "5"}, "LAB_MAX_IN_FLIGHT=5: the lab does not limit"),
    ("no colon here", {}, "expected package.module:attribute"),
    ("", {}, "LAB_APP is not set"),
    (f"{BARE_MODULE}:wsgi", {"LAB_APP_PATHS": "/a,b"}, "LAB_APP_PATHS"),
    (f"{BARE_MODULE}:wsgi", {"LAB_APP_PATHS": '["/a", 3]'}, "not a JSON list of paths"),
    (f"{BARE_MODULE}:wsgi", {"LAB_APP_PATHS": '["/a,b", "c"]'}, "each path starts with /: 'c'"),
]


@pytest.mark.parametrize(("app", "env", "message"), BAD, ids=[f"{app} {env}" for app, env, _ in BAD])
@pytest.mark.parametrize("command", [["check"], []], ids=["check", "serve"])
def test_a_bad_app_gets_one_clear_line(
    commands: ForkedCommands, app_dir: Path, app: str, env: dict[str, str], message: str, command: list[str]
) -> None:
    result = serve_team(commands, app_dir, *command, LAB_APP=app, LAB_PORT="1", **env)  # port 1: never served
    assert result.returncode == 2, (result.stdout, result.stderr)
    (line,) = result.stderr.splitlines()[-1:]
    assert line.startswith("error: ") and message in line, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert "LAB_APP" in line
