"""The endpoints that call the mock downstream service: one call, and the fan-out (k waits on a
thread pool, then the call). Registered only when LAB_DOWNSTREAM_URL is set; a failed call is a 502."""

from __future__ import annotations

import httpx
from flask import Blueprint, Response, jsonify

from apps.lab_flask.params import path_int, query_int, rule
from apps.lab_flask.state import state
from workload.downstream import call_blocking
from workload.errors import downstream_failure
from workload.fanout import MAX_FAN_OUT, fan_out_blocking
from workload.io import MAX_IO_MILLISECONDS
from workload.paths import FAN_OUT, io_path

blueprint = Blueprint("downstream", __name__)


def _client() -> httpx.Client:
    client = state().downstream
    assert client is not None, "create_app makes the client wherever this blueprint is registered"
    return client


@blueprint.get(rule(io_path("downstream")))
def call_downstream(milliseconds: str) -> Response:
    wait = path_int(milliseconds, "milliseconds", 0, MAX_IO_MILLISECONDS)
    return jsonify(call_blocking(_client(), wait).as_dict())


@blueprint.get(FAN_OUT)
def fan_out() -> Response:
    k = query_int("k", 1, MAX_FAN_OUT)
    wait_ms = query_int("wait_ms", 0, MAX_IO_MILLISECONDS)
    call_ms = query_int("call_ms", 0, MAX_IO_MILLISECONDS)
    return jsonify(fan_out_blocking(k, wait_ms, call_ms, _client()).as_dict())


@blueprint.errorhandler(httpx.HTTPError)
def downstream_failed(error: httpx.HTTPError) -> tuple[Response, int]:
    """The downstream call failed (refused, timed out, not 2xx)."""
    return jsonify(downstream_failure(error)), 502
