"""Profiles: the chart's values files and the node size each claims to fit (`fits`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .quantities import Resources, memory_bytes

CHART_DIR = Path(__file__).resolve().parents[2] / "charts" / "concurrency-lab"
# What kind's own control plane requests on its node (apiserver, controller-manager, scheduler,
# etcd, two CoreDNS, kindnet): measured 950m and about 290Mi. Profiles must fit beside it.
KIND_SHARE_CPU = 0.95
KIND_SHARE_MEMORY = 300 * 2**20


@dataclass(frozen=True)
class Profile:
    path: Path
    node: Resources
    auto_pick: bool

    @property
    def room(self) -> Resources:
        """What a kind node of this size leaves for the lab."""
        return self.node - Resources(KIND_SHARE_CPU, KIND_SHARE_MEMORY)

    def helm_args(self) -> list[str]:
        return [] if self.path.name == "values.yaml" else ["--values", str(self.path)]


def values_files(chart: Path = CHART_DIR) -> list[Path]:
    """The values the chart offers: its defaults and every ci/*-values.yaml."""
    return [chart / "values.yaml", *sorted((chart / "ci").glob("*-values.yaml"))]


def profile(path: Path, chart: Path = CHART_DIR) -> Profile:
    """The `fits` of a values file, over the defaults' (as Helm merges them)."""
    fits = dict(yaml.safe_load((chart / "values.yaml").read_text())["fits"])
    fits.update((yaml.safe_load(path.read_text()) or {}).get("fits") or {})
    return Profile(path, Resources(float(fits["cpu"]), memory_bytes(fits["memory"])), bool(fits["autoPick"]))


def auto_profiles(chart: Path = CHART_DIR) -> list[Profile]:
    """The whole-lab profiles, largest node first: the order run-lab tries them in."""
    found = [p for p in map(profile, values_files(chart)) if p.auto_pick]
    return sorted(found, key=lambda p: (p.node.cpu, p.node.memory), reverse=True)


def named_values(helm_args: Sequence[str]) -> list[str]:
    """The values files HELM_ARGS name (-f, --values; each may list several, comma-separated)."""
    named: list[str] = []
    args = iter(helm_args)
    for arg in args:
        if arg in ("-f", "--values"):
            named += next(args, "").split(",")
        elif arg.startswith(("-f=", "--values=")):
            named += arg.partition("=")[2].split(",")
    return [name for name in named if name]


def names_profile(helm_args: Sequence[str]) -> bool:
    """Whether HELM_ARGS choose the profile themselves: a values file they name says which node it
    fits (`fits`), or cannot be read here (a URL). An overlay without `fits` (the sizing's
    proposal-values.yaml) goes on top of the profile run-lab picks."""
    for name in named_values(helm_args):
        path = Path(name)
        if not path.is_file():
            return True
        values = yaml.safe_load(path.read_text()) or {}
        if not isinstance(values, dict) or "fits" in values:
            return True
    return False
