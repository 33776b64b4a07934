"""Whether a blocking wait hands the thread to other requests: then a thread's CPU clock read
across it counts their CPU too, so the work reports none for it and the middleware meters
greenlets, not the thread (measure.greencpu)."""

from __future__ import annotations

import sys


def waits_yield() -> bool:
    """True where a blocking wait (time.sleep, a socket read) hands the thread to other requests:
    in a gevent worker, whose monkey patching makes them switch greenlets."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("time"))
