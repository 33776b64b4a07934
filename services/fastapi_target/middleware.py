"""What wraps every request: its metrics, and the optional limit on work requests in flight."""

from __future__ import annotations

import time

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workload.errors import too_many
from workload.limits import InFlightLimiter, is_limited
from workload.metrics import IN_FLIGHT, UNMATCHED_ROUTE, observe_request


class MetricsMiddleware:
    """Counts and times every request by route template (read from the matched route)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_and_record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, send_and_record_status)
        finally:
            IN_FLIGHT.dec()
            route = scope.get("route")
            template = getattr(route, "path", UNMATCHED_ROUTE)
            observe_request(scope["method"], template, status, time.perf_counter() - start)


class InFlightLimitMiddleware:
    """Answers 429 to work requests beyond the configured number in flight."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limiter = InFlightLimiter(limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_limited(scope["path"]):
            await self.app(scope, receive, send)
            return
        if not self.limiter.try_acquire():
            await JSONResponse(too_many(self.limiter.limit), status_code=429)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release()
