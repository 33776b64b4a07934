"""Nonsense input never takes a server down or earns a 5xx."""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from labtester.launcher import RunningTarget
from tests.conftest import Configured, StartTarget


@pytest.fixture(scope="module")
def fastapi(start: StartTarget, downstream: RunningTarget) -> RunningTarget:
    # A small iteration cap keeps every valid CPU case short; the cap's bound is tested all the same.
    return start("fastapi", LAB_MAX_ITERATIONS="5", LAB_DOWNSTREAM_URL=downstream.url)


def shorten_waits(case: schemathesis.Case) -> None:
    """Valid but long work becomes short valid work: the run tests validation, not patience."""
    for parameters, name in (
        (case.path_parameters, "milliseconds"),
        (case.query, "io_ms"),
        (case.query, "cpu_ms"),
        (case.query, "wait_ms"),
        (case.query, "call_ms"),
    ):
        value = (parameters or {}).get(name)
        if isinstance(value, int) and 50 < value <= 60_000:
            parameters[name] = 50  # type: ignore[index]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fastapi_openapi_cases_get_no_server_errors(fastapi: RunningTarget, mode: GenerationMode) -> None:
    """Every operation of the OpenAPI schema, with valid and with invalid input (schemathesis)."""
    schema = schemathesis.openapi.from_url(f"{fastapi.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10

    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not list(operation.iter_parameters()):
            continue  # nothing to get wrong

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: schemathesis.Case) -> None:
            shorten_waits(case)
            response = case.call(timeout=60)
            assert response.status_code < 500, (case.path, case.path_parameters, case.query)

        check()
    assert httpx.get(f"{fastapi.url}/healthz").status_code == 200


@pytest.fixture(scope="module", params=["flask-1x", "flask-gevent", "flask-gthread"])
def flask(request: pytest.FixtureRequest, configured: Configured) -> RunningTarget:
    """Sync workers, and the gevent workers' greenlets and gthread workers' threads that run the
    same handlers, as the lab runs them."""
    return configured(request.param)


SEGMENTS = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#"), max_size=30),
    st.sampled_from(["0", "1", "-1", "1e3", "0x10", "NaN", "inf", " 1", "\u0661", "%00", ".."]),
)
ROUTES = st.sampled_from(
    [
        "/test/sync-cpubound/",
        "/test/io-bound/",
        "/test/calibrate?samples=",
        "/test/mixed?io_ms=1&cpu_ms=",
        "/test/fan-out?wait_ms=1&call_ms=1&k=",
        "/test/fan-out?k=2&call_ms=1&wait_ms=",
        "/nope/",
    ]
)


def as_int(value: str) -> int | None:
    """What int() makes of it, as a server would parse it ("¹" is a digit but no integer)."""
    try:
        return int(value)
    except ValueError:
        return None


@given(route=ROUTES, value=SEGMENTS)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_flask_answers_nonsense_without_server_errors(flask: RunningTarget, route: str, value: str) -> None:
    # Large valid values are real work: push them far above the cap, where they must be refused.
    number = as_int(value)
    if number is not None and number > 5:
        value = str(number * 10**12)
    # Plain HTTP on 127.0.0.1: no certificate store to load for each example's client (34 ms of
    # CPU each, twice per example), and each example still on a connection of its own.
    with httpx.Client(base_url=flask.url, timeout=60, verify=False) as client:
        try:
            response = client.get(route + value)
        except httpx.InvalidURL:
            return  # the client cannot even send it

        assert response.status_code < 500, (route, value, response.text)
        assert response.headers["content-type"].startswith("application/json")
    assert httpx.get(f"{flask.url}/healthz", verify=False).status_code == 200
