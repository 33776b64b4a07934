"""platform/engine/runc_without_sys_resource.py: runc, minus CAP_SYS_RESOURCE in every spec it runs.

The wrapper is run for real; `runc` is a stand-in on PATH that records what it was given (the
real runc and the missing capability are proven by `make kind-check` on such a machine).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.script_module import REPO_ROOT, load_script

WRAPPER = REPO_ROOT / "platform/engine/runc_without_sys_resource.py"
wrapper = load_script("platform/engine/runc_without_sys_resource.py")

CAPABILITIES = ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE", "CAP_NET_ADMIN"]
FAKE_RUNC = """#!/bin/sh
printf '%s\\n' "$@" > "$RECORD"
cat "$SPEC" > "$RECORD.spec"
"""


def process_spec() -> dict:
    sets = ("bounding", "effective", "inheritable", "permitted", "ambient")
    return {"args": ["sh"], "capabilities": {name: list(CAPABILITIES) for name in sets}}


def run_wrapper(tmp_path: Path, args: list[str], spec: Path) -> tuple[list[str], dict]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "runc").write_text(FAKE_RUNC)
    (bin_dir / "runc").chmod(0o755)
    record = tmp_path / "record"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "RECORD": str(record), "SPEC": str(spec)}
    subprocess.run([WRAPPER, *args], check=True, env=env, cwd=tmp_path)
    return record.read_text().splitlines(), json.loads(Path(f"{record}.spec").read_text())


def test_create_drops_the_capability_from_the_bundle(tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "config.json").write_text(json.dumps({"ociVersion": "1.0.2", "process": process_spec()}))
    args = ["--root", "/run/runc", "--log-format", "json", "create", "--bundle", str(bundle), "container-1"]
    passed, spec = run_wrapper(tmp_path, args, bundle / "config.json")
    assert passed == args  # handed to runc unchanged
    for values in spec["process"]["capabilities"].values():
        assert values == ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_ADMIN"]
    assert spec["ociVersion"] == "1.0.2"


def test_exec_drops_it_from_the_process_file(tmp_path):
    process = tmp_path / "process.json"
    process.write_text(json.dumps(process_spec()))
    _, spec = run_wrapper(tmp_path, ["exec", "--process", str(process), "--detach", "container-1"], process)
    assert all("CAP_SYS_RESOURCE" not in values for values in spec["capabilities"].values())


def test_other_commands_touch_nothing(tmp_path):
    config = tmp_path / "config.json"  # the working directory: create's default bundle
    config.write_text(json.dumps({"process": process_spec()}))
    passed, spec = run_wrapper(tmp_path, ["--root", "/run/runc", "delete", "--force", "container-1"], config)
    assert passed[-3:] == ["delete", "--force", "container-1"]
    assert spec["process"] == process_spec()


def test_the_command_follows_global_options_with_values():
    assert (
        wrapper.command_of(["--log", "/x/log.json", "--log-format", "json", "run", "-b", "/b", "id"]) == "run"
    )
    assert wrapper.option_value(["run", "-b", "/b", "id"], "--bundle", "-b") == "/b"
    assert wrapper.option_value(["create", "--bundle=/c", "id"], "--bundle", "-b") == "/c"
