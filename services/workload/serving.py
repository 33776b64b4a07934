"""How the server in front of an app runs its requests: the server's entrypoint says, the app reads.

An app describes its own routes (work on the event loop, in a pool, blocking code); the server
that serves it decides the rest of /info: its name and worker class, how each worker runs
blocking (WSGI) code and how many such requests at once, and how many connections one worker
admits at once whatever the app does. The same FastAPI or Flask app served by uvicorn, gunicorn
or granian thus states its slots honestly. The entrypoint exports its description (LAB_SERVING)
before any worker loads the app, as it exports LAB_WORKERS; an app run without one describes the
server of its own family.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

from workload.contract import Endpoint, Execution

SERVING_ENV = "LAB_SERVING"


@dataclass(frozen=True)
class Serving:
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

    def info(self) -> dict[str, object]:
        """What /info adds: the connections one worker admits at once, the server's own settings."""
        return {"admits_per_worker": self.admits, "server_settings": self.settings}

    def admitted(self, endpoints: list[Endpoint], workers: int) -> list[Endpoint]:
        """The endpoints with their slots capped by what the workers admit at once."""
        if self.admits is None:
            return endpoints
        cap = workers * self.admits
        return [
            dataclasses.replace(e, slots=cap if e.slots is None else min(e.slots, cap)) for e in endpoints
        ]


def export(serving: Serving) -> None:
    """Tell every process of the tree, before any loads the app, how this server runs it."""
    os.environ[SERVING_ENV] = json.dumps(dataclasses.asdict(serving))


def current(default: Serving) -> Serving:
    """The description the serving entrypoint exported, else `default` (the app's own family's)."""
    exported = os.environ.get(SERVING_ENV)
    return Serving(**json.loads(exported)) if exported else default
