"""The control endpoints /info lists under "control": health, /info, calibration, census, metrics."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from apps.lab_flask.params import query_int
from apps.lab_flask.state import state
from workload import paths
from workload.census import take_census
from workload.exposition import exposition
from workload.kernel import MAX_CALIBRATE_SAMPLES
from workload.metrics import counted_calibration

blueprint = Blueprint("control", __name__)


@blueprint.get(paths.HEALTH)
def healthz() -> Response:
    return jsonify(status="ok")


@blueprint.get(paths.INFO)
def get_info() -> Response:
    return jsonify(state().info)


@blueprint.get(paths.CALIBRATE)
def calibrate() -> Response:
    return jsonify(counted_calibration(query_int("samples", 1, MAX_CALIBRATE_SAMPLES, default="1")))


@blueprint.get(paths.CENSUS)
def resmon() -> Response:
    return jsonify(take_census(state().settings.reload).as_dict())


@blueprint.get(paths.METRICS)
def metrics() -> Response:
    body, content_type = exposition(state().settings.reload)
    return Response(body, content_type=content_type)
