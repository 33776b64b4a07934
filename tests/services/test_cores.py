"""Effective cores and CPU throttling from fake cgroup trees: v2, v1, unlimited, none, a setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload.cores import CgroupCpu, affinity_cpus, cgroup_cpu_stat, effective_cores


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


V2_STAT = (
    "usage_usec 900\nuser_usec 600\nsystem_usec 300\nnr_periods 40\nnr_throttled 7\nthrottled_usec 350000\n"
)
V1_STAT = "nr_periods 12\nnr_throttled 5\nthrottled_time 1500000000\nnr_bursts 0\nburst_time 0\n"


def test_cgroup_v2_throttling(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu.stat": V2_STAT, "cpu.max": "50000 100000"})
    assert cgroup_cpu_stat(root, proc) == CgroupCpu("cgroup v2", 40, 7, pytest.approx(0.35))


def test_cgroup_v2_throttling_of_the_own_nested_group(tmp_path: Path) -> None:
    root, proc = cgroup(
        tmp_path,
        {"cpu.stat": V2_STAT.replace("nr_throttled 7", "nr_throttled 1"), "kubepods/pod1/cpu.stat": V2_STAT},
        "0::/kubepods/pod1\n",
    )
    stat = cgroup_cpu_stat(root, proc)
    assert stat is not None and stat.throttled_periods == 7


def test_cgroup_v2_without_the_cpu_controller_has_no_throttling(tmp_path: Path) -> None:
    # Without the cpu controller a v2 cpu.stat counts usage only: no periods, nothing to report.
    root, proc = cgroup(tmp_path, {"cpu.stat": "usage_usec 900\nuser_usec 600\nsystem_usec 300\n"})
    assert cgroup_cpu_stat(root, proc) is None


def test_cgroup_v1_throttling(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {"cpu/cpu.stat": V1_STAT}, "1:cpu:/\n")
    assert cgroup_cpu_stat(root, proc) == CgroupCpu("cgroup v1", 12, 5, pytest.approx(1.5))


def test_cgroup_v1_throttling_of_the_own_group(tmp_path: Path) -> None:
    root, proc = cgroup(
        tmp_path,
        {
            "cpu,cpuacct/cpu.stat": V1_STAT.replace("nr_throttled 5", "nr_throttled 0"),
            "cpu,cpuacct/lab/cpu.stat": V1_STAT,
        },
        "4:cpu,cpuacct:/lab\n",
    )
    stat = cgroup_cpu_stat(root, proc)
    assert stat is not None and (stat.source, stat.throttled_periods) == ("cgroup v1", 5)


def test_no_cgroup_means_no_throttling(tmp_path: Path) -> None:
    root, proc = cgroup(tmp_path, {})
    assert cgroup_cpu_stat(root, proc) is None
