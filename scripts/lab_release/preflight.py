"""Step 1: the values to install with, after checking the release fits the cluster's free room."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from .cluster import Cluster, say
from .demand import Room, place, pod_demands, rooms
from .profiles import auto_profiles, names_profile
from .quantities import Resources, total


def fits(cluster: Cluster, helm_args: Sequence[str], free: Sequence[Room]) -> tuple[bool, Resources]:
    demands = pod_demands(cluster.render(helm_args))
    return not place(demands, free), total(d.requests for d in demands)


def preflight(cluster: Cluster, extra_args: Sequence[str]) -> list[str]:
    """The values arguments to install with, after checking they fit; SystemExit when none do."""
    free = rooms(cluster.nodes(), cluster.all_pods(), cluster.ours)
    room = total(r.free for r in free)
    where = f"the nodes have {room} free (allocatable minus what other pods request)"
    user_args = cluster.s.helm_args
    if names_profile(user_args):
        ok, requested = fits(cluster, [*user_args, *extra_args], free)
        if ok:
            say(f"Preflight: the release requests {requested}; {where}: it fits.")
            return []
        message = f"Preflight: the release requests {requested}, but {where}: it does not fit."
        for candidate in auto_profiles(cluster.s.chart):
            if fits(cluster, [*candidate.helm_args(), *extra_args], free)[0]:
                hint = shlex.join(candidate.helm_args()) or "(no -f: the defaults)"
                raise SystemExit(
                    f'{message}\nThe values file that fits: {candidate.path} (HELM_ARGS="{hint}")'
                )
        raise SystemExit(f"{message}\nNo profile of the chart fits this cluster either.")
    requested = Resources()
    for candidate in auto_profiles(cluster.s.chart):
        ok, requested = fits(cluster, [*candidate.helm_args(), *user_args, *extra_args], free)
        if ok:
            say(f"Profile: {candidate.path}, the largest that fits this cluster.")
            say(f"Preflight: the release requests {requested}; {where}.")
            return candidate.helm_args()
    # What the release asks with the smallest profile, beside what that profile alone asks: the
    # HELM_ARGS may be what does not fit, not the node.
    smallest = auto_profiles(cluster.s.chart)[-1]
    alone = fits(cluster, [*smallest.helm_args(), *extra_args], free)[1]
    said = f" (with HELM_ARGS; {alone} without them)" if user_args and alone != requested else ""
    raise SystemExit(
        f"Preflight: no profile fits: {where}; the smallest, {smallest.path} (made for a "
        f"{smallest.node.cpu:g}-CPU node), requests {requested}{said}."
    )
