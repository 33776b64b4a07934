"""The answers and the side-by-side comparison: from the typed results of a real short lab, every
number traceable to its curve; the console's opening fits about 30 lines and 100 columns."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from labtester.info import TargetInfo
from labtester.load import Sample
from labtester.report.compare import load_results
from labtester.report.console import NARROW, answer_lines, comparison_tables
from labtester.report.contents import Contents, gather
from labtester.results import Results, RunInfo, TargetResult
from labtester.scenarios import SHAPES
from labtester.scenarios.bursts import answers as answers_module
from labtester.scenarios.bursts.curves import curves
from labtester.scenarios.common import encode
from labtester.scenarios.flow.analyse import flows
from labtester.scenarios.flow.settings import FlowSettings
from tests.conftest import DEFINITIONS, MEASURED

LabRun = tuple[subprocess.CompletedProcess[str], Path]


@pytest.fixture(scope="module")
def contents(lab_run: LabRun) -> Contents:
    return gather(load_results(lab_run[1]))


def test_the_lab_answers_the_four_burst_questions(contents: Contents) -> None:
    assert [a.key for a in contents.answers] == ["async-cpu", "workers", "offload", "io-bound"]
    for answer in contents.answers:
        assert answer.chart and all(line.x for line in answer.chart.lines)
        assert "model" in answer.evidence  # the prediction beside the measurement


def test_each_number_comes_from_the_measured_curve(contents: Contents) -> None:
    by_key = {a.key: a for a in contents.answers}
    loop = next(c for c in curves(contents.results) if c.name == "fastapi sync-cpubound")
    point = loop.largest
    assert point is not None and point.overlap == 1  # the blocked loop served one at a time
    figure = f"{loop.times(point):.1f}x one on fastapi's event loop (model {loop.model_times(point):.1f}x)"
    assert figure in by_key["async-cpu"].evidence and by_key["async-cpu"].answer.startswith("No")
    # The caveat stands exactly where a burst behind the answer was hit by the machine.
    behind = {
        "io-bound": [c for c in curves(contents.results) if c.endpoint.name == "io-bound"],
        "offload": [
            c
            for c in curves(contents.results)
            if c.name in ("fastapi sync-cpubound", "fastapi offload-cpubound")
        ],
    }
    for key, used in behind.items():
        hit = any(r.verdict == "interference" for c in used for p in c.points for r in p.runs)
        assert (by_key[key].caveat is not None) == hit, by_key[key].caveat


def test_every_server_appears_where_its_answer_applies(contents: Contents) -> None:
    """Every target's event loops in the async answer, every server whose workers run CPU work
    themselves in the workers answer, every target's waits in the I/O answer: from /info, by name
    of nobody."""
    by_key = {a.key: a for a in contents.answers}
    measured = curves(contents.results)
    loops = {c.target.name for c in measured if c.endpoint.execution == "event_loop"}
    assert loops and all(f"on {name}'s " in by_key["async-cpu"].evidence for name in loops)
    in_workers = {c.target.name for c in measured if answers_module._in_workers(c)}
    several = {c.target.name for c in measured if c.target.info and c.target.info.workers > 1}
    assert in_workers >= several
    assert all(f"on {name}'s " in by_key["workers"].evidence for name in in_workers)
    waits = {c.target.name for c in measured if c.endpoint.work == "io"}
    assert all(f"on {name}'s " in by_key["io-bound"].evidence for name in waits)


def test_the_console_opens_with_the_answers_in_about_30_lines(lab_run: LabRun, contents: Contents) -> None:
    lines = answer_lines(contents.answers)
    assert max(len(line) for line in lines) <= NARROW
    # The answers fit about 30 lines; a caveat, where the machine took CPU from the bursts behind
    # an answer (a busy machine's: 32 lines were seen at load 17), adds its own few lines beneath.
    plain = answer_lines([answer.model_copy(update={"caveat": None}) for answer in contents.answers])
    caveats = sum(answer.caveat is not None for answer in contents.answers)
    assert len(plain) <= 30 and len(lines) - len(plain) <= 3 * caveats
    stdout = lab_run[0].stdout
    assert stdout.index("Answers (") < stdout.index("Side by side") < stdout.index("Process census")
    assert lines[1] in stdout  # the first answer, as printed


def test_the_comparison_fits_100_columns_with_a_column_per_target(contents: Contents) -> None:
    recorded = Console(record=True, width=200, file=io.StringIO())
    tables = comparison_tables(contents)
    for table in tables:
        recorded.print(table)
    assert max(len(line) for line in recorded.export_text().splitlines()) <= NARROW
    columns = [c.header for t in tables for c in t.columns if c.header != "figure (unit)"]
    assert columns == contents.targets == sorted(MEASURED, key=list(DEFINITIONS).index)
    assert all(len(t.rows) == len(contents.rows) for t in tables)


def fan_out_info(
    worker_class: str, workers: int, threads: int, execution: str, slots: int | None, server: str = "s"
) -> TargetInfo:
    endpoint = {
        "name": "fan-out",
        "path": "/test/fan-out",
        "work": "io",
        "execution": execution,
        "slots": slots,
    }
    return TargetInfo.model_validate(
        {
            "name": worker_class,
            "framework": "f",
            "server": server,
            "worker_class": worker_class,
            "workers": workers,
            "threads": threads,
            "effective_cores": 2,
            "cores_source": "setting",
            "kernel": {"name": "k", "loops_per_iteration": 1, "max_iterations": 10, "work_cap_seconds": 1},
            "endpoints": {"fan-out": endpoint},
        }
    )


def flow_record(users: int, latency_s: float, duration_s: float = 10.0) -> dict[str, object]:
    """Users all started at once, each sending again as soon as answered, every answer `latency_s`."""
    settings = FlowSettings(users=users, spawn_rate=1000, duration_s=duration_s)
    sent = [k * latency_s for k in range(int(duration_s / latency_s))]
    samples = [Sample("/test/fan-out", s, s, latency_s, 200, None) for _ in range(users) for s in sent]
    return {
        "params": settings.model_dump(),
        "baseline": encode([Sample("/test/fan-out", 0, 0, 0.8, 200, None)] * 5),
        "wall_s": duration_s,
        "users": [(0.0, users)],
        "server_cpu_s": None,
        "samples": encode(samples),
    }


def flow_results(sides: list[tuple[str, TargetInfo, float]]) -> Results:
    flow = SHAPES["flow"]
    targets = [
        TargetResult(
            name=name,
            url="http://x",
            measure=True,
            ready=True,
            info=info,
            scenarios={"flow": flow.analyse([flow_record(20, latency)], info, None)},  # type: ignore[arg-type]
        )
        for name, info, latency in sides
    ]
    return Results(
        run=RunInfo(id="r", started_at=0, finished_at=1, status="complete", settings={}),
        stability=None,
        targets=targets,
    )


def test_the_flow_answers_asgi_against_wsgi_threads_beside_littles_law_and_the_study() -> None:
    # 20 users, 0.8 s a request alone: no limit on the event loop; 2 x 8 threads hold 16 at once,
    # so each request there waits its turn: 20 / 16 x 0.8 s = 1.0 s.
    flow = SHAPES["flow"]
    sides = [
        ("fastapi", fan_out_info("uvicorn", 1, 1, "async", None), 0.8),
        ("flask-gthread", fan_out_info("gthread", 2, 8, "threads", 16), 1.0),
    ]
    results = flow_results(sides)
    targets = list(results.targets)
    ((_, a), (_, w)) = flows(results)
    (answer,) = flow.answers(results)
    assert answer.key == "asgi-wsgi" and w.prediction.binding == "slots"
    assert f"at {a.requests_per_s / w.requests_per_s:.1f}x the requests/s" in answer.answer
    assert "thread-pool exhaustion" in answer.answer
    predicted = a.prediction.per_s / w.prediction.per_s
    assert f"Little's law here: {predicted:.1f}x; the study: 5.4x" in answer.evidence
    assert answer.chart and [line.label for line in answer.chart.lines] == ["fastapi", "flask-gthread"]
    rate, median = flow.comparison(results)
    assert rate.cells["flask-gthread"].ratio == pytest.approx(w.requests_per_s / w.prediction.per_s)
    assert median.cells["fastapi"].value == pytest.approx(0.8)
    # Only the study's two sides make the comparison: without the threads there is no answer.
    results.targets = targets[:1]
    assert flow.answers(results) == []


def test_a_server_that_runs_both_kinds_of_app_is_compared_with_itself_too() -> None:
    """The study's pair by how /info says each runs the fan-out (async waits, threads), on
    different servers; then a server serving an ASGI and a WSGI app: only the interface differs."""
    study = [
        ("fastapi", fan_out_info("uvicorn", 1, 1, "async", None, "uvicorn"), 0.8),
        ("flask-gthread", fan_out_info("gthread", 2, 8, "threads", 16, "gunicorn"), 1.0),
    ]
    granian = [
        ("granian-asgi", fan_out_info("asgi", 2, 1, "async", 1024, "granian"), 0.8),
        ("granian-wsgi", fan_out_info("wsgi", 2, 8, "threads", 16, "granian"), 1.0),
    ]
    flow = SHAPES["flow"]
    results = flow_results(study + granian)
    (answer,) = flow.answers(results)
    assert answer.answer.startswith("fastapi (ASGI) came out ahead")
    rates = {t.name: f.requests_per_s for t, f in flows(results)}
    same = f"{rates['granian-asgi'] / rates['granian-wsgi']:.1f}x the requests/s of granian-wsgi"
    assert f"On granian alone, granian-asgi (ASGI) served {same}" in answer.evidence
    assert answer.chart and [line.label for line in answer.chart.lines] == [
        "fastapi",
        "flask-gthread",
        "granian-asgi",
        "granian-wsgi",
    ]
    # granian alone: its own pair is the comparison.
    (alone,) = flow.answers(flow_results(granian))
    assert (
        alone.answer.startswith("granian-asgi (ASGI) came out ahead")
        and "On granian alone" not in alone.evidence
    )
