"""The whole check in order, and how a failure, Ctrl-C or SIGTERM ends it."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

from lab_release.profiles import profile, values_files
from lab_release.quantities import gib

from .checking import Fail, step
from .config import CHART, LOG_DIR, STATE_DIR
from .control_plane import Binaries, control_plane
from .kube import Kube
from .nodes import make_nodes, node_name
from .preflight import auto_pick, too_big_is_refused
from .profiles import install_profile


def main() -> int:
    cache = Path(os.environ.get("LAB_CACHE") or sys.exit("set LAB_CACHE (the Makefile does)"))
    binaries = Binaries.from_cache(cache, os.environ.get("HELM") or sys.exit("set HELM (the Makefile does)"))
    profiles = [profile(values, CHART) for values in values_files(CHART)]
    sizes = sorted({p.node for p in profiles}, key=lambda size: size.cpu, reverse=True)
    shutil.rmtree(LOG_DIR, ignore_errors=True)
    STATE_DIR.mkdir(parents=True, mode=0o700)
    started = time.monotonic()
    try:
        with control_plane(binaries, STATE_DIR, LOG_DIR) as config:
            os.environ["KUBECONFIG"] = str(config)  # for run-lab's kubectl and helm, as for this check's
            kube = Kube(binaries, config)
            step("nodes: " + ", ".join(f"{node_name(s)} ({s.cpu:g} CPUs, {gib(s.memory)})" for s in sizes))
            make_nodes(kube, sizes)
            for claimed in profiles:
                install_profile(kube, claimed.path, claimed.node, roll=claimed.node.cpu == 2)
            by_cpu = {size.cpu: size for size in sizes}
            too_big_is_refused(kube, by_cpu[4], dict(os.environ))
            auto_pick(kube, by_cpu[2], CHART / "ci" / "two-cpu-values.yaml")
            auto_pick(kube, by_cpu[4], CHART / "ci" / "small-values.yaml")
    finally:
        shutil.rmtree(STATE_DIR, ignore_errors=True)
    step(f"cluster-check passed in {time.monotonic() - started:.0f} s; everything it started has stopped")
    return 0


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM: unwinds like an exception, so everything started is stopped."""

    def __init__(self, signum: int) -> None:
        self.signum = signum


def interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def entry() -> None:
    """`make cluster-check`: main, with its failure or interruption said in one line."""
    # Installed explicitly: a shell that starts this in the background may have SIGINT ignored.
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, interrupt)
    try:
        sys.exit(main())
    except Fail as failure:
        print(f"\ncluster-check FAILED: {failure}\n(logs of every component: {LOG_DIR})", file=sys.stderr)
        sys.exit(1)
    except Interrupted as stop:
        name = signal.Signals(stop.signum).name
        print(f"\ncluster-check stopped by {name}; everything it started has stopped.",
              file=sys.stderr)  # fmt: skip
        sys.exit(128 + stop.signum)
