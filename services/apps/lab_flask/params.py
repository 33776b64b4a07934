"""Request parameters, validated as FastAPI validates them (workload.errors), and the routes'
rules written from the contract's path templates (measure.servertiming reads them back)."""

from __future__ import annotations

import re

from flask import request

from workload.errors import bounded_int

_TEMPLATE_PARAMETER = re.compile(r"\{([^{}]+)\}")


def rule(template: str) -> str:
    """The contract's `/x/{n}` as Flask's rule `/x/<n>`."""
    return _TEMPLATE_PARAMETER.sub(r"<\1>", template)


def path_int(value: str, name: str, low: int, high: int) -> int:
    """The path parameter `name` as an integer in [low, high], else a 422."""
    return bounded_int(value, ["path", name], low, high)


def query_int(name: str, low: int, high: int, default: str = "") -> int:
    """The request's query parameter `name` as an integer in [low, high], else a 422."""
    return bounded_int(request.args.get(name, default), ["query", name], low, high)
