"""gunicorn's configuration for every app it serves, from the LAB_* environment (GunicornSettings).

Runs in the arbiter before any worker imports the app, so the exported environment (iteration
cap, tree root, metrics directory) reaches every worker.

gevent workers are monkey-patched by gunicorn itself, in each worker after the fork and before it
loads the app (gunicorn/workers/ggevent.py). Nothing here may patch: the arbiter stays a plain
process, and this module imports nothing that keeps its own copy of socket or time.sleep (the
gevent target's /info lists any such copy under monkey_patch.unpatched_references; a test holds
it against a process patched first thing).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

from servers.gunicorn.settings import GunicornSettings
from workload.head_limits import HEADER_FIELD_BYTES, HEADER_FIELDS, REQUEST_LINE_BYTES
from workload.lifetime import die_with_parent
from workload.limits import shared_slots
from workload.metrics_process import MetricsProcess, start_metrics_process
from workload.server import prepare_environment, remove_metrics_dir

if TYPE_CHECKING:
    from gunicorn.arbiter import Arbiter
    from gunicorn.workers.base import Worker


_settings = GunicornSettings()
prepare_environment(_settings, root_serves=False)
# How the workers run the app, for its /info: exported before any worker loads it.
_settings.served_by().export()

bind = f"{_settings.host}:{_settings.port}"
workers = _settings.resolved_workers(default_multiplier=1)
os.environ["LAB_WORKERS"] = str(workers)
worker_class = _settings.worker_class
# gevent workers: requests one worker takes at once; the sync worker ignores it.
worker_connections = _settings.worker_connections
# gthread workers: request threads per worker. Never more than 1 otherwise: gunicorn would turn a
# sync worker with threads into a gthread one behind the settings' back.
threads = _settings.threads if worker_class == "gthread" else 1
# gunicorn's default 30 s would kill a worker in the middle of a legitimate long request.
timeout = int(_settings.work_cap_seconds) + 30
graceful_timeout = 10
# Each worker's heartbeat file (made and unlinked at once, kept open): explicitly in tmp_dir.
worker_tmp_dir = str(_settings.tmp_dir)
reload = _settings.reload
loglevel = _settings.log_level
accesslog = None
proc_name = _settings.name or "concurrency-lab"


# The lab's limits on a request's head, written out where every target reads them (they are
# gunicorn's defaults): every other server enforces the same ones.
limit_request_line = REQUEST_LINE_BYTES
limit_request_field_size = HEADER_FIELD_BYTES
limit_request_fields = HEADER_FIELDS

# gunicorn's control socket (for gunicornc) would be one more file outside /tmp
# (~/.gunicorn/gunicorn.ctl), shared by every gunicorn of the user; the lab never uses it.
control_socket_disable = True

_metrics_process: MetricsProcess | None = None


def when_ready(server: Arbiter) -> None:
    # From the arbiter, before it forks any worker: the metrics process answers however busy the
    # workers are, and none of them inherits its port.
    global _metrics_process
    _metrics_process = start_metrics_process(
        _settings.host, _settings.metrics_port, _settings.reload, _settings.metrics_deadline_s
    )


def post_fork(server: Arbiter, worker: Worker) -> None:
    # Killed with the arbiter, even a SIGKILLed one: a worker alone would finish its request and
    # notice the arbiter gone only at its next check (sync: up to `timeout` / 2 later).
    die_with_parent(server.pid, signal.SIGKILL)
    if worker_class == "gevent":
        # Once a worker has died, child_exit has imported prometheus_client into the arbiter, and
        # it keeps its own copy of threading.Lock. A worker forked after that drops it before it
        # patches, so the app imports it afresh, patched (tests/services/test_gevent.py).
        for name in [name for name in sys.modules if name.partition(".")[0] == "prometheus_client"]:
            del sys.modules[name]


def child_exit(server: Arbiter, worker: Worker) -> None:
    # Imported here, not above: prometheus_client must first see PROMETHEUS_MULTIPROC_DIR.
    from prometheus_client import multiprocess

    # A dead worker's live gauges must stop counting; its counters stay in the totals.
    multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]  # unannotated upstream
    # Nor may the in-flight slots it held stay taken (a worker SIGKILLed in a request).
    shared_slots().release_all(int(worker.pid))  # an int, whatever the stubs say


def on_exit(server: Arbiter) -> None:
    if _metrics_process is not None:
        _metrics_process.close()
    remove_metrics_dir()
