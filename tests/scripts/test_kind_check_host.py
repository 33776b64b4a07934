"""scripts/kind_check_host.py: what kind-check compares before kind-up and after kind-down."""

from __future__ import annotations

import subprocess

from tests.script_module import load_script

check_host = load_script("scripts/kind_check_host.py")


def test_settings_are_the_writable_ones_less_volatile_and_per_interface(tmp_path):
    files = {
        "vm/overcommit_memory": ("0\n", 0o644),
        "kernel/ns_last_pid": ("123\n", 0o644),
        "fs/file-nr": ("1 0 9\n", 0o444),
        "net/ipv4/conf/all/forwarding": ("0\n", 0o644),
        "net/ipv4/conf/veth1234/forwarding": ("1\n", 0o644),
        "net/ipv6/neigh/br-abc/retrans_time": ("1000\n", 0o644),
        "kernel/printk": ("4\t4\t1\t7\n", 0o644),
    }
    for key, (value, mode) in files.items():
        path = tmp_path / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value)
        path.chmod(mode)
    assert check_host.settings(tmp_path) == {
        "vm/overcommit_memory": "0",
        "net/ipv4/conf/all/forwarding": "0",
        "kernel/printk": "4 4 1 7",
    }


def test_differences_name_each_change():
    before = {
        "settings": {"kernel/panic": "0", "vm/overcommit_memory": "0"},
        "interfaces": ["eth0", "lo"],
        "processes": {"10": "dockerd"},
    }
    after = {
        "settings": {"kernel/panic": "10", "vm/overcommit_memory": "0"},
        "interfaces": ["br-1", "eth0", "lo"],
        "processes": {"10": "dockerd", "42": "containerd-shim"},
    }
    assert check_host.differences(before, after) == [
        "kernel setting kernel.panic: 0 before, 10 after",
        "network interface br-1 left behind",
        "process containerd-shim (pid 42) left behind",
    ]
    assert check_host.differences(before, before) == []


def test_settings_that_appear_are_reported_not_failed():
    before = {"settings": {"kernel/panic": "0"}, "interfaces": [], "processes": {}}
    after = {**before, "settings": {"kernel/panic": "0", "net/bridge/bridge-nf-call-iptables": "1"}}
    assert check_host.differences(before, after) == []
    assert check_host.appeared(before, after) == ["net.bridge.bridge-nf-call-iptables"]


def test_a_process_left_in_this_process_group_is_found_and_another_groups_is_not():
    child = subprocess.Popen(["sleep", "60"])
    # Another job of the same shell or CI runner (its own process group): not the check's.
    other_job = subprocess.Popen(["sleep", "60"], process_group=0)
    try:
        ours = check_host.our_processes()
        assert ours.get(str(child.pid)) == "sleep" and str(other_job.pid) not in ours
    finally:
        for process in (child, other_job):
            process.kill()
            process.wait()
    assert str(child.pid) not in check_host.our_processes()
