"""The W3C Server-Timing header each measured response carries, and the route label of a request.

    Server-Timing: lab-cpu;dur=12.345, lab-app;dur=45.678, lab-pid;desc=1234,
                   lab-start;desc=1764000000.123456, lab-queue;dur=0.512, lab-elsewhere;dur=9.876,
                   lab-gc;dur=123.456;desc=4

`lab-cpu` (ms): the CPU the request used up to its response headers (measure.requestcpu);
`lab-elsewhere` (ms): of `lab-cpu`, what ran off the request's own thread (in threads it handed
work to or started, in other processes): on an event loop, the part that ran beside the loop;
absent in a gevent worker, whose pools and threads are greenlets of its one thread;
`lab-app` (ms): wall time from the app being called to its headers being sent; `lab-pid`: the
process that served it; `lab-start`: server epoch seconds when the app was called; `lab-queue`
(ms): of `lab-app`, the time the request's threads waited on a run queue for a core (a busy
machine's delay, neither the request's work nor its own wait; absent where the kernel keeps no
schedstat); `lab-gc`: the full garbage collections its process ran so far, as it sent the headers
(measure.full_collections: `desc` their count, `dur` their CPU in ms; absent where not counted):
two responses of one process tell how many ran between them, so a client reads the collections of
any stretch of its own load without asking the server. Appended after
any Server-Timing the app set, whose entries stay as they were: the `lab-` names are the lab's own,
so an app's `cpu` or `app` is never read as the lab's (and were an app to write a `lab-` entry,
the lab's own comes last, which readers take).

Route labels stay a bounded set: the framework's matched template where it says one (FastAPI and
Starlette put the route in the scope; Flask's is put in the environ by `hint_flask_routes`), else
one of the paths the lab was told about (LAB_APP_PATHS), else `<unmatched>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, AnyStr

from measure import full_collections

HEADER = "Server-Timing"
UNMATCHED_ROUTE = "<unmatched>"  # raw paths would make label cardinality unbounded
ROUTE_KEY = "lab.route"  # a scope (ASGI) or environ (WSGI) key any layer may set to the template

_RULE_PARAMETER = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def timing_value(
    cpu_s: float,
    app_s: float,
    pid: int,
    started_at: float,
    queued_s: float | None = None,
    elsewhere_s: float | None = None,
) -> str:
    value = (
        f"lab-cpu;dur={cpu_s * 1000:.3f}, lab-app;dur={app_s * 1000:.3f}, "
        f"lab-pid;desc={pid}, lab-start;desc={started_at:.6f}"
    )
    if queued_s is not None:
        value += f", lab-queue;dur={queued_s * 1000:.3f}"
    if elsewhere_s is not None:
        value += f", lab-elsewhere;dur={elsewhere_s * 1000:.3f}"
    if (collections := full_collections.counted()) is not None:  # this process's, as the headers leave
        value += f", lab-gc;dur={collections[1] * 1000:.3f};desc={collections[0]}"
    return value


def with_timing(
    headers: Iterable[Sequence[AnyStr]], name: AnyStr, value: AnyStr, separator: AnyStr
) -> list[tuple[AnyStr, AnyStr]]:
    """`headers` with `value` appended to the app's own Server-Timing (`name`), or added; one
    header, so clients that read only the first of several still see every entry."""
    merged: list[tuple[AnyStr, AnyStr]] = []
    found = False
    lower = name.lower()
    for key, existing in headers:
        if not found and key.lower() == lower:
            merged.append((key, existing + separator + value))
            found = True
        else:
            merged.append((key, existing))
    if not found:
        merged.append((name, value))
    return merged


def route_template(flask_rule: str) -> str:
    """Flask's `/x/<int:n>` as `/x/{n}`, the same template FastAPI reports."""
    return _RULE_PARAMETER.sub(r"{\1}", flask_rule)


class RouteLabels:
    """The route label of a request: the framework's template, a known path, or `<unmatched>`.

    `paths`: LAB_APP_PATHS entries, each a path that may carry a query string; a request matches
    an entry with its query, else the entry's path alone.
    """

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self.known: set[str] = set()
        for entry in paths:
            self.known |= {entry, entry.partition("?")[0]}

    def label(self, template: object, path: str, query: str) -> str:
        if isinstance(template, str) and template:
            return template
        if query and f"{path}?{query}" in self.known:
            return f"{path}?{query}"
        return path if path in self.known else UNMATCHED_ROUTE


def asgi_template(scope: dict[str, Any]) -> object:
    """The matched route's template in an ASGI scope, once the app has routed it."""
    return scope.get(ROUTE_KEY) or getattr(scope.get("route"), "path", None)


def hint_flask_routes(app: Any) -> None:
    """Put each request's matched Flask rule, as a template, in its environ (ROUTE_KEY); by a
    signal, so the app's own hooks are untouched. Flask matches the URL before it sends it."""
    from flask import request, request_started

    def hint(sender: object, **extra: object) -> None:
        rule = request.url_rule
        if rule is not None:
            request.environ[ROUTE_KEY] = route_template(rule.rule)

    request_started.connect(hint, app, weak=False)
