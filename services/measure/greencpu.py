"""Per-request CPU in a gevent worker: the thread's clock charged to the greenlet that ran.

All of a gevent worker's requests share its one thread, so its CPU clock read across a request
counts every request that ran meanwhile. A greenlet switch tracer (`greenlet.settrace`) reads the
clock at every switch instead and charges the stretch since the last switch to the account of the
greenlet that ran it. A greenlet the request spawns (gevent.spawn, or a thread under monkey
patching) inherits the request's account the first time it runs, through gevent's
`spawning_greenlet`, and is charged to it while the request is in flight: once the request ended,
a greenlet it spawned that lives on (a pool's, a consumer) is no request's. The hub and the
server's own greenlets have no account, so their CPU is no request's. A call a request hands to
a pool (a ThreadPoolExecutor's workers are greenlets here) is charged to it while it runs, on
whichever greenlet runs it (`greenlet_call`, installed by measure.handover): a pool greenlet one
request spawned is not charged to it for the next request's calls.

A greenlet that serves requests (the server's one per connection) runs only the server's code
between two of them (the last response finished, the next one read and parsed): its stretches then
are the server's cost of the next request (`RequestAccount.server_s`), measured as the requests
themselves run, as measure.wsgi_cpu.ThreadMeter does on a thread. The hub's own are not in it.

Its meter runs only in gevent workers; elsewhere importing greenlet changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

import greenlet

from measure.handover import meter_handovers
from measure.requestcpu import ACCOUNT, RequestAccount

Result = TypeVar("Result")

_ATTRIBUTE = "lab_request_account"
_SERVES = "lab_serves_requests"  # set on a greenlet once it has served a request
_UNSEEN = object()


def _inherited(target: greenlet.greenlet) -> RequestAccount | None:
    """The account of the greenlet that spawned `target` (None if none), cached on `target`."""
    spawner_ref = getattr(target, "spawning_greenlet", None)
    spawner = spawner_ref() if spawner_ref is not None else None
    account = getattr(spawner, _ATTRIBUTE, None) if spawner is not None else None
    with suppress(AttributeError):  # a greenlet type without attributes: looked up again next time
        setattr(target, _ATTRIBUTE, account)
    return account


def _stop(account: RequestAccount | None, now: float) -> float:
    """The account's running stretch ended at `now`: its seconds (0 if it ran none)."""
    if account is None or account.running_since is None:
        return 0.0
    seconds, account.running_since = now - account.running_since, None
    return seconds


def greenlet_call(account: RequestAccount, function: Callable[..., Result], /, *args: object) -> Result:
    """`function(*args)` on this (pool) greenlet, charged to `account` meanwhile in place of the
    greenlet's own account (which it gets back after)."""
    current = greenlet.getcurrent()
    own: RequestAccount | None = getattr(current, _ATTRIBUTE, None)
    now = time.thread_time()
    if own is not None:
        own.cpu_s += _stop(own, now)
    setattr(current, _ATTRIBUTE, account)
    account.running_since = now
    token = ACCOUNT.set(account)
    try:
        return function(*args)
    finally:
        ACCOUNT.reset(token)
        now = time.thread_time()
        account.charge(_stop(account, now))  # to the process's total only if the request ended
        if own is not None and own.closed:
            own = None
        setattr(current, _ATTRIBUTE, own)
        if own is not None:
            own.running_since = now


class GreenletMeter:
    """Per-greenlet accounts in this thread, kept by a switch tracer (installed on first use;
    chained to any tracer already set), and pool calls charged to the request that handed them."""

    def __init__(self) -> None:
        self._previous: Any = greenlet.settrace(self._trace)
        meter_handovers(greenlet_call, threads=False)
        self._since = time.thread_time()  # the current greenlet's stretch began
        self._between = 0.0  # serving greenlets' stretches between requests, not yet booked

    def _trace(self, event: str, args: tuple[greenlet.greenlet, greenlet.greenlet]) -> None:
        if event in ("switch", "throw"):
            origin, target = args
            now = time.thread_time()
            leaving = getattr(origin, _ATTRIBUTE, None)
            if leaving is not None and leaving.running_since is not None:
                leaving.cpu_s += now - leaving.running_since
                leaving.running_since = None
            elif leaving is None and getattr(origin, _SERVES, False):
                self._between += now - self._since
            self._since = now
            seen = getattr(target, _ATTRIBUTE, _UNSEEN)
            entering: RequestAccount | None = _inherited(target) if seen is _UNSEEN else seen  # type: ignore[assignment]
            if entering is not None and entering.closed:  # spawned by a request that has ended
                setattr(target, _ATTRIBUTE, None)
            elif entering is not None:
                entering.running_since = now
        if self._previous is not None:
            self._previous(event, args)

    def begin(self) -> RequestAccount:
        """A new account for the request the current greenlet starts to serve, which takes the
        serving greenlets' stretches between requests so far as the server's cost."""
        current, now = greenlet.getcurrent(), time.thread_time()
        if getattr(current, _SERVES, False):
            self._between += now - self._since
        account = RequestAccount(running_since=now)
        account.server_s, self._between = self._between, 0.0
        with suppress(AttributeError):  # a greenlet type without attributes: its stretches uncounted
            setattr(current, _SERVES, True)
        setattr(current, _ATTRIBUTE, account)
        return account

    def pause(self, account: RequestAccount) -> None:
        """The current greenlet works for no request until `resume` (the server writes a body)."""
        setattr(greenlet.getcurrent(), _ATTRIBUTE, None)
        now = self._since = time.thread_time()
        if account.running_since is not None:
            account.cpu_s += now - account.running_since
            account.running_since = None

    def resume(self, account: RequestAccount) -> None:
        now = time.thread_time()
        if getattr(greenlet.getcurrent(), _SERVES, False):
            self._between += now - self._since
        setattr(greenlet.getcurrent(), _ATTRIBUTE, account)
        if account.running_since is None:
            account.running_since = now

    def end(self, account: RequestAccount) -> None:
        """The current greenlet serves no request any more (a keep-alive connection's next one
        gets an account of its own); greenlets it spawned stop charging `account` once it is
        closed."""
        self.pause(account)
