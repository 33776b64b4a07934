"""The server in front of an app says how it runs it (workload.served_by); the app's /info follows."""

from __future__ import annotations

import json
from dataclasses import asdict

import httpx
import pytest

from tests.conftest import StartTarget
from workload.contract import Server, admitted, cpu_endpoint, io_endpoint
from workload.cores import EffectiveCores
from workload.served_by import SERVED_BY_ENV, ServedBy, served_by


def server(admits: int | None) -> Server:
    return Server(
        "f",
        "s",
        "w",
        workers=2,
        threads=1,
        cores=EffectiveCores(2, "setting", None),
        max_iterations=9,
        admits=admits,
    )


def test_admission_caps_every_endpoints_slots() -> None:
    endpoints = [cpu_endpoint("sync-cpubound", "threads", 16), io_endpoint("io-bound", "async", None)]
    capped = admitted(endpoints, server(admits=4))
    assert [e.slots for e in capped] == [8, 8]  # 2 workers x 4 each, also where the app sets no limit
    assert admitted(endpoints, server(admits=None)) == endpoints


def test_threads_are_the_per_worker_requests_only_of_threads() -> None:
    assert ServedBy("s", "w", execution="threads", per_worker=8).threads == 8
    assert ServedBy("s", "w", execution="greenlets", per_worker=100).threads == 1


def test_the_exported_description_wins_over_the_apps_default(monkeypatch: pytest.MonkeyPatch) -> None:
    own = ServedBy("own", "sync", execution="workers")
    monkeypatch.delenv(SERVED_BY_ENV, raising=False)
    assert served_by(default=own) == own
    told = ServedBy("other", "wsgi", execution="threads", per_worker=4, admits=4, settings={"k": 1})
    monkeypatch.setenv(SERVED_BY_ENV, "")  # restored after the test, whatever export sets
    told.export()
    assert served_by(default=own) == told


# What another family's server might say: the FastAPI app keeps its own executions (async waits),
# the Flask app takes the server's (threads); both take its admission limit and its names.
TOLD = {
    "fastapi": (ServedBy("uvicorn", "told", admits=1), "async", 1),
    "flask-1x": (ServedBy("gunicorn", "told", execution="threads", per_worker=3, admits=2), "threads", 2),
}


@pytest.mark.parametrize("name", TOLD)
def test_an_app_states_what_the_exported_description_says(start: StartTarget, name: str) -> None:
    # The apps' own entrypoints export nothing: what a server of another family exports reaches
    # the app in every worker, through the environment.
    told, execution, per_worker = TOLD[name]
    target = start(name, **{SERVED_BY_ENV: json.dumps(asdict(told))})
    info = httpx.get(f"{target.url}/info").json()
    assert (info["worker_class"], info["threads"]) == ("told", told.threads)
    assert (info["admits_per_worker"], info["server_settings"]) == (told.admits, {})
    io = info["endpoints"]["io-bound"]
    assert (io["execution"], io["slots"]) == (execution, info["workers"] * per_worker)
