"""Every values file fits the node it claims (`fits`), beside kind's own control plane.

Sums every pod the chart renders (targets, census-only variants, downstream, tester, results,
Prometheus, Grafana) with the same code `make run-lab`'s preflight uses, and holds the sums against
the claimed node minus kind's share: requests must fit (or pods stay Pending), and so must memory
limits (memory is never overcommitted). CPU limits may add up to more than the node: the tester
loads one target at a time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lab_release.demand import pod_demands
from lab_release.profiles import auto_profiles, profile, values_files
from lab_release.quantities import cpu_cores, total
from tests.chart.conftest import CHART, Render, profile_values
from tests.chart.test_app import enabled

VALUES = values_files(CHART)


@pytest.mark.parametrize("values", VALUES, ids=lambda path: path.name)
def test_requests_and_memory_limits_fit_the_claimed_node(render: Render, values: Path) -> None:
    claimed = profile(values, CHART)
    demands = pod_demands(render(values))
    names = {demand.name.split("/")[1].removeprefix("lab-concurrency-lab-") for demand in demands}
    assert {"prometheus", "downstream"} <= names or "targets-only" in values.name, names

    requests = total(d.requests for d in demands)
    assert requests.fits_in(claimed.room), (
        f"{values.name} requests {requests}; a {claimed.node.cpu:g}-CPU node leaves {claimed.room}"
    )
    memory_limits = sum(d.limits.memory for d in demands)
    assert memory_limits == requests.memory, "memory requests and limits differ: memory is overcommitted"
    for demand in demands:
        assert demand.limits.cpu <= claimed.node.cpu, f"{demand.name}: a CPU limit above the whole node"


@pytest.mark.parametrize("values", VALUES, ids=lambda path: path.name)
def test_measured_targets_may_use_at_least_one_whole_cpu(render: Render, values: Path) -> None:
    """A quota under one core throttles a CPU-bound request many times a second (issue 18.3)."""
    measured = [
        m
        for m in render(values)
        if m["kind"] == "Deployment"
        and m["metadata"].get("annotations", {}).get("concurrency-lab/measure") == "true"
    ]
    assert measured
    for manifest in measured:
        target = manifest["metadata"]["name"]
        (container,) = manifest["spec"]["template"]["spec"]["containers"]
        limits, requests = container["resources"]["limits"], container["resources"]["requests"]
        assert cpu_cores(limits["cpu"]) >= 1, f"{values.name}: {target}"
        assert cpu_cores(requests["cpu"]) <= cpu_cores(limits["cpu"]), f"{values.name}: {target}"


def test_the_auto_profiles_are_a_ladder_of_node_sizes() -> None:
    """What run-lab may pick by itself, largest first: the defaults, then smaller whole labs."""
    ladder = [(p.path.name, p.node.cpu) for p in auto_profiles(CHART)]
    assert ladder == [("values.yaml", 14), ("small-values.yaml", 4), ("two-cpu-values.yaml", 2)]


def test_the_two_cpu_profile_fits_what_kind_leaves_on_two_cpus(render: Render) -> None:
    """kind's control plane takes 0.85-0.95 of a 2-CPU node: the lab must fit in the 1.05 left."""
    demands = pod_demands(render(CHART / "ci" / "two-cpu-values.yaml"))
    requests = total(d.requests for d in demands)
    assert round(requests.cpu * 1000) <= 2000 - 950


@pytest.mark.parametrize("values", VALUES, ids=lambda path: path.name)
def test_a_profile_leaves_out_only_targets_its_node_has_no_room_for(
    render: Render, values: Path, tmp_path: Path
) -> None:
    """Each name in `omitTargets` names a target, and deploying it as well would no longer fit the
    claimed node: a target is left out for room, and only for room."""
    claimed = profile(values, CHART)
    merged = profile_values(values)
    omitted = merged.get("omitTargets") or []
    known = {entry["name"] for path in VALUES for entry in profile_values(path)["targets"]}
    assert set(omitted) <= known, f"{values.name}: no target is named {set(omitted) - known}"
    own = {entry["name"] for entry in merged["targets"]}
    for name in [name for name in omitted if name in own]:  # an overlay's own list may lack some
        with_it = tmp_path / f"with-{name}.yaml"
        with_it.write_text(yaml.safe_dump({"omitTargets": [other for other in omitted if other != name]}))
        requests = total(d.requests for d in pod_demands(render(values, with_it)))
        assert not requests.fits_in(claimed.room), (
            f"{values.name}: {name} fits ({requests} in {claimed.room})"
        )


@pytest.mark.parametrize("interface", ["asgi", "wsgi"])
@pytest.mark.parametrize("values", [p.path for p in auto_profiles(CHART)], ids=lambda path: path.name)
def test_an_app_lab_fits_every_profile_it_may_be_picked_with(
    render: Render, values: Path, interface: str
) -> None:
    """An app lab deploys the app's configurations instead of the lab's own targets (the README's
    Kubernetes command): its requests fit each whole-lab profile's node, the 2-CPU one among them."""
    claimed = profile(values, CHART)
    demands = pod_demands(render(values, set_values=enabled(interface)))
    requests = total(d.requests for d in demands)
    assert requests.fits_in(claimed.room), f"{values.name}: {requests} in {claimed.room}"
