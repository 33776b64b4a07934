"""How the server in front of an app runs it: the server's entrypoint says, the app's /info follows.

An app describes its own routes (work on the event loop, in a pool, blocking code); the server
that serves it decides the rest of /info: its name and worker class, how a worker runs blocking
(WSGI) code and how many such requests at once, and how many connections one worker admits
whatever the app does. The same app served by uvicorn, gunicorn or granian thus states its slots
honestly. The entrypoint exports its description (LAB_SERVED_BY) before any worker loads the app,
as it exports LAB_WORKERS; an app run without one is described by its own family's server
(workload.contract's defaults).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workload.contract import Execution

SERVED_BY_ENV = "LAB_SERVED_BY"


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
