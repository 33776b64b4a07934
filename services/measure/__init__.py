"""Each request's CPU, measured where it ran: meters for threads, greenlets and asyncio tasks, the
work a request hands to other threads, the WSGI and ASGI middleware, the Server-Timing header.
Imports no Prometheus: the metrics install themselves as its sink (measure.observers)."""
