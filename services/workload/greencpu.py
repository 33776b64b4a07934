"""Per-request CPU in a gevent worker: the thread's clock charged to the greenlet that ran.

All of a gevent worker's requests share its one thread, so its CPU clock read across a request
counts every request that ran meanwhile. A greenlet switch tracer (`greenlet.settrace`) reads the
clock at every switch instead and charges the stretch since the last switch to the account of the
greenlet that ran it. A greenlet the request spawns (gevent.spawn, or a thread under monkey
patching) inherits the request's account the first time it runs, through gevent's
`spawning_greenlet`, and is charged to it while the request is in flight: once the request ended,
a greenlet it spawned that lives on (a pool's, a consumer) is no request's. The hub and the
server's own greenlets have no account, so their CPU is no request's.

Imported only in gevent workers: it imports greenlet.
"""

from __future__ import annotations

import time
from contextlib import suppress
from typing import Any

import greenlet

from workload.requestcpu import RequestAccount

_ATTRIBUTE = "lab_request_account"
_UNSEEN = object()


def _inherited(target: greenlet.greenlet) -> RequestAccount | None:
    """The account of the greenlet that spawned `target` (None if none), cached on `target`."""
    spawner_ref = getattr(target, "spawning_greenlet", None)
    spawner = spawner_ref() if spawner_ref is not None else None
    account = getattr(spawner, _ATTRIBUTE, None) if spawner is not None else None
    with suppress(AttributeError):  # a greenlet type without attributes: looked up again next time
        setattr(target, _ATTRIBUTE, account)
    return account


class GreenletMeter:
    """Per-greenlet accounts in this thread, kept by a switch tracer (installed on first use;
    chained to any tracer already set)."""

    def __init__(self) -> None:
        self._previous: Any = greenlet.settrace(self._trace)

    def _trace(self, event: str, args: tuple[greenlet.greenlet, greenlet.greenlet]) -> None:
        if event in ("switch", "throw"):
            origin, target = args
            now = time.thread_time()
            leaving = getattr(origin, _ATTRIBUTE, None)
            if leaving is not None and leaving.running_since is not None:
                leaving.cpu_s += now - leaving.running_since
                leaving.running_since = None
            seen = getattr(target, _ATTRIBUTE, _UNSEEN)
            entering: RequestAccount | None = _inherited(target) if seen is _UNSEEN else seen  # type: ignore[assignment]
            if entering is not None and entering.closed:  # spawned by a request that has ended
                setattr(target, _ATTRIBUTE, None)
            elif entering is not None:
                entering.running_since = now
        if self._previous is not None:
            self._previous(event, args)

    def begin(self) -> RequestAccount:
        """A new account for the request the current greenlet starts to serve."""
        account = RequestAccount(running_since=time.thread_time())
        setattr(greenlet.getcurrent(), _ATTRIBUTE, account)
        return account

    def pause(self, account: RequestAccount) -> None:
        """The current greenlet works for no request until `resume` (the server writes a body)."""
        setattr(greenlet.getcurrent(), _ATTRIBUTE, None)
        if account.running_since is not None:
            account.cpu_s += time.thread_time() - account.running_since
            account.running_since = None

    def resume(self, account: RequestAccount) -> None:
        setattr(greenlet.getcurrent(), _ATTRIBUTE, account)
        if account.running_since is None:
            account.running_since = time.thread_time()

    def end(self, account: RequestAccount) -> None:
        """The current greenlet serves no request any more (a keep-alive connection's next one
        gets an account of its own); greenlets it spawned stop charging `account` once it is
        closed."""
        self.pause(account)
