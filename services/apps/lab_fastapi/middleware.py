"""The optional limit on work requests in flight (each request's metrics and Server-Timing come
from measure.asgi_cpu, the middleware every ASGI app of the lab is wrapped in)."""

from __future__ import annotations

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from workload.errors import too_many
from workload.limits import InFlightLimiter, is_limited


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
