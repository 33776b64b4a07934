"""The server in front of an app says how it runs it (workload.served_by); the app's /info follows."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from apps.lab_fastapi.app import create_app as create_fastapi_app
from apps.lab_flask.app import create_app as create_flask_app
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


# What another server might say: the FastAPI app keeps its own executions (async waits), the
# Flask app takes the server's (threads); both take its admission limit and its names.
TOLD = {
    "lab_fastapi": (ServedBy("uvicorn", "told", admits=1), "async", 1),
    "lab_flask": (ServedBy("gunicorn", "told", execution="threads", per_worker=3, admits=2), "threads", 2),
}


def info_of(app: str) -> dict[str, Any]:
    """/info of the app built by its factory in this process, as a server's worker builds it."""
    if app == "lab_fastapi":
        with TestClient(create_fastapi_app()) as client:  # its lifespan ends its offload pool
            return dict(client.get("/info").json())
    return dict(create_flask_app().test_client().get("/info").get_json())


@pytest.mark.parametrize("app", TOLD)
def test_an_app_states_what_the_exported_description_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, app: str
) -> None:
    # Every server exports its description before any worker builds the app (servers/<name>/):
    # whatever it says reaches the app's /info, through the environment.
    told, execution, per_worker = TOLD[app]
    monkeypatch.setenv(SERVED_BY_ENV, json.dumps(asdict(told)))
    monkeypatch.setenv("LAB_WORKERS", "2")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # /info lists it under `writes`
    info = info_of(app)
    assert (info["worker_class"], info["threads"]) == ("told", told.threads)
    assert (info["admits_per_worker"], info["server_settings"]) == (told.admits, {})
    io = info["endpoints"]["io-bound"]
    assert (io["execution"], io["slots"]) == (execution, info["workers"] * per_worker)
