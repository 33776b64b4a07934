"""Effective cores from fake cgroup trees: v2, v1, unlimited, and an explicit setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload.cores import affinity_cpus, effective_cores


def cgroup(tmp_path: Path, files: dict[str, str], self_cgroup: str = "0::/\n") -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(content)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(self_cgroup)
    return root, proc


@pytest.mark.parametrize(
    ("cpu_max", "expected"), [("100000 100000", 1), ("150000 100000", 2), ("50000 100000", 1)]
)
def test_cgroup_v2_quota(tmp_path: Path, cpu_max: str, expected: int) -> None:
    root, proc = cgroup(tmp_path, {"cpu.max": cpu_max})
    cores = effective_cores(None, root, proc)
    assert (cores.cores, cores.source) == (min(expected, affinity_cpus()), "cgroup v2")


def test_cgroup_v2_nested_own_group(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"kubepods/pod1/cpu.max": "100000 100000"}, "0::/kubepods/pod1\n")
    assert effective_cores(None, root, proc).quota_cpus == 1.0


def test_cgroup_v2_max_means_no_limit(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu.max": "max 100000"})
    cores = effective_cores(None, root, proc)
    assert (cores.cores, cores.source, cores.quota_cpus) == (affinity_cpus(), "affinity", None)


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    root, proc = cgroup(
        tmp_path, {"cpu/cpu.cfs_quota_us": "100000", "cpu/cpu.cfs_period_us": "100000"}, "1:cpu:/\n"
    )
    cores = effective_cores(None, root, proc)
    assert (cores.cores, cores.source, cores.quota_cpus) == (1, "cgroup v1", 1.0)


def test_cgroup_v1_unlimited(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"})
    assert effective_cores(None, root, proc).source == "affinity"


def test_quota_above_the_cpus_we_may_use_is_capped(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu.max": f"{100000 * (affinity_cpus() + 8)} 100000"})
    assert effective_cores(None, root, proc).cores == affinity_cpus()


def test_no_cgroup_files_falls_back_to_affinity(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {})
    assert effective_cores(None, root, proc).source == "affinity"


def test_explicit_setting_wins(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu.max": "100000 100000"})
    assert effective_cores(7, root, proc).cores == 7
