"""How far gevent's monkey patching reached in this process (gunicorn's gevent worker).

gunicorn's gevent worker calls `gevent.monkey.patch_all()` in each worker after the fork and
before it loads the app (gunicorn/workers/ggevent.py: init_process -> patch -> load_wsgi), so
everything the app imports sees the cooperative socket, time.sleep, select and locks. Modules the
arbiter imported before the fork (gunicorn itself, servers.gunicorn.conf and the workload
modules it imports) are patched in place too: they look `socket.socket` or `time.sleep` up when
they call them. The one thing late patching cannot fix is a module that copied an original into
its own namespace at import (`from socket import socket`). `unpatched_references` lists every such
copy, so a test can hold it against a process that patched first thing.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

# The blocking primitives this lab's handlers reach: waits, sockets (the downstream call), locks.
PRIMITIVES = (
    ("socket", "socket"),
    ("socket", "create_connection"),
    ("socket", "getaddrinfo"),
    ("time", "sleep"),
    ("select", "select"),
    ("select", "poll"),
    ("selectors", "DefaultSelector"),
    ("threading", "Lock"),
    ("threading", "Event"),
    ("_thread", "allocate_lock"),
    ("_thread", "start_new_thread"),
    ("ssl", "SSLContext"),
    ("subprocess", "Popen"),
)
MODULES = ("socket", "time", "select", "selectors", "threading", "ssl", "subprocess", "os", "signal")


def _holders(originals: dict[int, str]) -> list[str]:
    """`module.name` for every module-level name bound to one of `originals` (by identity)."""
    found = []
    for module_name, module in list(sys.modules.items()):
        # A patched module's leftovers and the C modules the originals live in are gevent's
        # business (it replaces their public names); gevent itself keeps the originals on purpose.
        if module is None or module_name.startswith(("gevent", "_")) or module_name in MODULES:
            continue
        if module_name in ("posix", "nt", __name__):
            continue
        for name, value in list(vars(module).items()):
            if id(value) in originals and value is not None:
                found.append(f"{module_name}.{name} ({originals[id(value)]})")
    return sorted(found)


def monkey_patch_report() -> dict[str, object]:
    """Which modules gevent patched, and which modules still hold an unpatched original."""
    from gevent import monkey

    originals = {
        id(monkey.get_original(module, item)): f"{module}.{item}"
        for module, item in PRIMITIVES
        if monkey.is_object_patched(module, item)
    }
    return {
        "gevent": version("gevent"),
        "patched": {module: monkey.is_module_patched(module) for module in MODULES},
        "unpatched_references": _holders(originals),
    }
