"""Every process of a target's tree ends with the process that started it, however that one ends.

The kernel's parent-death signal (prctl PR_SET_PDEATHSIG) does it, even when the parent is
SIGKILLed. It is not inherited by children, so each process sets its own: the metrics process,
gunicorn's workers (post_fork), uvicorn's --workers and --reload children (serving.served_app) and the
offload pool's processes (their initializer). The root's own tie to whoever started it is that
starter's to make (the local launcher sets it; in a container the root is the container).

The kernel sends the signal when the *thread* that forked ends: each of these is started from its
parent's main thread (gunicorn's arbiter, uvicorn's supervisors, the event loop's submit).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ROOT_PID_ENV = "LAB_ROOT_PID"  # set by the root (workload.server) for its whole tree


def die_with_parent(parent_pid: int, signum: int = signal.SIGTERM) -> None:
    """`signum` when the parent dies; exit now if it died before the signal was set."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent_pid:
        sys.exit(0)  # the parent died before the signal was set: nothing would ever send it


def end_with_root() -> None:
    """In a process the root started to serve (a uvicorn worker or --reload child): SIGTERM,
    its own graceful shutdown, when the root dies. Nothing in the root itself."""
    root = os.environ.get(ROOT_PID_ENV)
    if root is not None and int(root) != os.getpid():
        die_with_parent(int(root))
