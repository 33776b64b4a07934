"""Which of the sizing's configurations start together before their proofs (prove.py).

Started one after another, each proof waited for its own server's start (5 to 21 s under load,
mostly its processes' imports) with the machine otherwise idle; started together, those imports
overlap. Each is still proved alone: a started server left idle costs next to nothing (five
servers of 20 processes between them spent 0.08 s of CPU in 10 s idle), and each is stopped once
proved, so a backlog it was left with never loads the next. Together only as many as half the memory free now
holds by their predicted memory: a configuration sized to a pod's whole memory starts alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import psutil

from labtester.proposal.plan import Planned

MEMORY_SHARE = 0.5  # of the memory free now: headroom for the load client and what the app allocates


def memory_for_starting() -> int:
    """The bytes the configurations started together may take between them."""
    return int(psutil.virtual_memory().available * MEMORY_SHARE)


def started_together(planned: Sequence[Planned], memory_bytes: int) -> list[list[Planned]]:
    """`planned` in order, cut into groups that start together: each as long as its configurations'
    predicted memory fits in `memory_bytes`, and at least one configuration (proved where it fits
    the pod it was sized for, as before). A configuration predicted only (`needs_pod`), or with no
    rate to offer it, starts nothing and takes no memory."""
    groups: list[list[Planned]] = []
    taken = 0
    for item in planned:
        needs = item.summary.memory_bytes if item.summary.runs_here else 0
        if not groups or taken + needs > memory_bytes:
            groups.append([])
            taken = 0
        groups[-1].append(item)
        taken += needs
    return groups
