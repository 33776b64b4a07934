#!/usr/bin/env python3
"""What `make kind-check` compares before `make kind-up` and after `make kind-down`: the machine.

`kind_check_host.py snapshot FILE` records the host's writable kernel settings (every writable file
under /proc/sys: the host's network namespace and the kernel-wide ones), its network interfaces and
the processes that could be ours: the container engine's, every process in a container, and every
process in this check's own process group (`make kind-check` and all it ran, also what it left
behind when its parent exited). Other work on the machine is none of these, even work started from
the same terminal or CI shell: a job of its own has its own group.
`kind_check_host.py compare FILE` takes the same snapshot again and lists every difference: a
setting changed, an interface or a process left behind (exit 1), so nothing has to be named in
advance to be caught.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

PROC_SYS = Path("/proc/sys")
# Changes on its own with every process started.
VOLATILE_SETTINGS = {"kernel/ns_last_pid"}
# Per-interface settings come and go with their interface, which the interface list compares.
PER_INTERFACE = re.compile(r"^net/ipv[46]/(conf|neigh)/(?!all/|default/)[^/]+/")
# The container engine's own processes on the host.
ENGINE_PROCESSES = re.compile(r"^(dockerd|containerd|containerd-shim.*|docker-proxy|runc)$")


def settings(root: Path = PROC_SYS) -> dict[str, str]:
    """Every writable setting under root and its value, whitespace normalised."""
    found = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory, name)
            key = str(path.relative_to(root))
            if key in VOLATILE_SETTINGS or PER_INTERFACE.match(key):
                continue
            try:
                if path.stat().st_mode & 0o200:
                    found[key] = " ".join(path.read_text().split())
            except OSError:  # write-only or refused to this reader
                continue
    return found


def interfaces() -> list[str]:
    return sorted(os.listdir("/sys/class/net"))


def ancestors(pid: int) -> set[int]:
    found = set()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return found


def our_processes() -> dict[str, str]:
    """pid -> name of every process that could be ours (see the module's docstring)."""
    group, mine = os.getpgid(0), ancestors(os.getpid())
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in mine:
            continue
        try:
            name = (entry / "comm").read_text().strip()
            in_container = "docker" in (entry / "cgroup").read_text()
            in_group = os.getpgid(int(entry.name)) == group
        except OSError:  # it has just exited
            continue
        if ENGINE_PROCESSES.match(name) or in_container or in_group:
            found[entry.name] = name
    return found


def snapshot() -> dict[str, Any]:
    return {"settings": settings(), "interfaces": interfaces(), "processes": our_processes()}


def appeared(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Settings that did not exist before: a kernel module the node loaded (br_netfilter, say)
    brought them. Not a setting changed, and unloading a module is not the lab's to do: reported."""
    return sorted(key.replace("/", ".") for key in set(after["settings"]) - set(before["settings"]))


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    found = []
    for key in sorted(before["settings"]):
        old, new = before["settings"][key], after["settings"].get(key)
        if old != new:
            found.append(f"kernel setting {key.replace('/', '.')}: {old} before, {new} after")
    for name in sorted(set(after["interfaces"]) - set(before["interfaces"])):
        found.append(f"network interface {name} left behind")
    for name in sorted(set(before["interfaces"]) - set(after["interfaces"])):
        found.append(f"network interface {name} is gone")
    for pid, name in sorted(after["processes"].items()):
        if pid not in before["processes"]:
            found.append(f"process {name} (pid {pid}) left behind")
    return found


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in {"snapshot", "compare"}:
        sys.exit("usage: kind_check_host.py snapshot|compare FILE")
    path = Path(sys.argv[2])
    if sys.argv[1] == "snapshot":
        path.write_text(json.dumps(snapshot()))
        return
    before, after = json.loads(path.read_text()), snapshot()
    if new_settings := appeared(before, after):
        print(f"new kernel settings (a module was loaded): {', '.join(new_settings)}")
    found = differences(before, after)
    for line in found:
        print(line, file=sys.stderr)
    if found:
        sys.exit(1)
    print("the machine is as before: kernel settings, network interfaces, no process left behind")


if __name__ == "__main__":
    main()
