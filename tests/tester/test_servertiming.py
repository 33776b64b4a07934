"""The Server-Timing header as the tester reads it: the lab's own entries (`lab-cpu`, `lab-app`,
`lab-pid`, `lab-start`, `lab-queue`, `lab-elsewhere`, `lab-gc`) in any order, among the app's own, which are
never read as the lab's; a response without them is not measured (None), never zero."""

from __future__ import annotations

import pytest

from labtester.servertiming import ServerTiming, from_headers, parse

LAB = "lab-cpu;dur=12.345, lab-app;dur=45.678, lab-pid;desc=1234, lab-start;desc=1764000000.123456"


def test_the_labs_entries_in_seconds() -> None:
    timing = parse([LAB])
    assert timing.cpu_s == pytest.approx(0.012345) and timing.app_s == pytest.approx(0.045678)
    assert timing.pid == 1234 and timing.started_at == pytest.approx(1764000000.123456)
    assert timing.queued_s is None  # a server that keeps no schedstat: not measured, never zero
    assert parse([f"{LAB}, lab-queue;dur=0.512"]).queued_s == pytest.approx(0.000512)
    assert timing.elsewhere_s is None  # a server that did not say where its CPU ran
    assert parse([f"{LAB}, lab-elsewhere;dur=9.876"]).elsewhere_s == pytest.approx(0.009876)
    assert timing.collections is None and timing.collections_cpu_s is None  # not counted there
    counted = parse([f"{LAB}, lab-gc;dur=123.456;desc=4"])
    assert counted.collections == 4 and counted.collections_cpu_s == pytest.approx(0.123456)


def test_any_order_among_the_apps_own_entries_and_lines() -> None:
    shuffled = 'db;dur=3.2;desc="query", lab-start;desc=5.5, lab-pid;desc=7'
    lines = [shuffled, "lab-app;dur=20, lab-cpu;dur=4, cache;desc=hit"]
    assert parse(lines) == ServerTiming(0.004, 0.02, 7, 5.5)


def test_the_apps_own_cpu_and_app_entries_are_not_the_labs() -> None:
    # An app that times itself with the names the lab used to write: its figures stay its own.
    assert parse(["cpu;dur=99, app;dur=120, pid;desc=1, start;desc=2"]) == ServerTiming()
    assert parse([f"cpu;dur=99, app;dur=120, {LAB}"]) == parse([LAB])
    # Were an app to write a lab- entry too, the lab's own, appended after it, is the one read.
    assert parse([f"lab-cpu;dur=99, {LAB}"]).cpu_s == pytest.approx(0.012345)


def test_without_the_labs_entries_nothing_is_measured() -> None:
    assert parse([]) == ServerTiming(None, None, None, None)
    assert parse(["db;dur=3.2, total;dur=9"]) == ServerTiming()
    assert parse(["lab-cpu;dur=abc, lab-app"]) == ServerTiming()  # malformed: not a zero


def test_from_raw_header_pairs_as_h11_and_aiohttp_give_them() -> None:
    pairs = [(b"content-type", b"application/json"), (b"Server-Timing", LAB.encode())]
    assert from_headers(pairs).pid == 1234
    assert from_headers([("server-timing", "lab-cpu;dur=1")]).cpu_s == pytest.approx(0.001)
    assert from_headers([("content-length", "2")]) == ServerTiming()
