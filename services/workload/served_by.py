"""How the server in front of an app runs it: the server's entrypoint says, the app's /info follows.

An app describes its own routes (work on the event loop, in a pool, blocking code); the server
that serves it decides the rest of /info: its name and worker class, how a worker runs blocking
(WSGI) code and how many such requests at once, and how many connections one worker admits
whatever the app does. The same app served by uvicorn, gunicorn or granian thus states its slots
honestly. The entrypoint exports its description (LAB_SERVED_BY) before any worker loads the app,
as it exports LAB_WORKERS; an app run without one (called in-process) is described by the
default server of its interface (workload.contract).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Literal

SERVED_BY_ENV = "LAB_SERVED_BY"
# The two ways a Python app is called: each server serves one or both, each app speaks one or both.
Interface = Literal["asgi", "wsgi"]
# event_loop: blocks the server's event loop; workers: one request per sync worker process;
# process_pool / thread_pool: offloaded to a pool; async: awaits without holding anything;
# greenlets: gevent workers, each taking up to worker_connections requests whose waits overlap
# while their CPU parts take turns on the worker's one thread; threads: gthread workers, each
# running `threads` requests on threads whose waits overlap while their CPU parts share the
# worker's one core (the GIL).
Execution = Literal["event_loop", "workers", "process_pool", "thread_pool", "async", "greenlets", "threads"]


class AppError(Exception):
    """What is wrong with an app, or with the server asked to serve it, in one line that names it."""


@dataclass(frozen=True)
class ServedBy:
    server: str  # distribution name: /info shows its version
    worker_class: str  # the server's name for how its workers run
    # How one worker runs blocking (WSGI) code, and how many such requests at once: one per sync
    # worker, its threads, its greenlets. None for a server of async (ASGI) apps.
    execution: Execution | None = None
    per_worker: int = 1
    # Connections one worker admits at once, whatever the app does; None: no limit of the server's.
    admits: int | None = None
    # The server's own settings behind the above, as /info shows them (`server_settings`).
    settings: dict[str, object] = field(default_factory=dict)

    @property
    def threads(self) -> int:
        """Request threads per worker, as /info counts them: the threads blocking code runs on."""
        return self.per_worker if self.execution == "threads" else 1

    def export(self) -> None:
        """Tell every process of the tree, before any loads the app, how this server runs it."""
        os.environ[SERVED_BY_ENV] = json.dumps(dataclasses.asdict(self))


def served_by(default: ServedBy) -> ServedBy:
    """The description the serving entrypoint exported, else `default` (the app's own family's)."""
    exported = os.environ.get(SERVED_BY_ENV)
    return ServedBy(**json.loads(exported)) if exported else default
