"""The chart's results server, started as the chart starts it: it keeps a run that client 0 PUTs,
serves it back read-only, and refuses anything that is not a run or would leave its folder."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rich.console import Console

from labtester.launcher import free_port
from labtester.report.publish import publish
from labtester.results_server import MAX_UNPACKED_BYTES


def answers(url: str) -> bool:
    try:
        return httpx.get(url).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    directory, port = tmp_path / "results", free_port()
    directory.mkdir()
    command = [sys.executable, "-m", "labtester", "serve-results", "--directory", str(directory)]
    process = subprocess.Popen([*command, "--port", str(port)])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not answers(url) and time.monotonic() < deadline:
            time.sleep(0.1)
        yield url, directory
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_published_run_is_kept_and_served(server: tuple[str, Path], tmp_path: Path) -> None:
    url, directory = server
    run = tmp_path / "20261124-101500"
    (run / "plots").mkdir(parents=True)
    (run / "results.json").write_text('{"ok": true}')
    (run / "plots" / "a.png").write_bytes(b"\x89PNG")
    assert publish(run, url, Console(file=io.StringIO()))
    assert httpx.get(f"{url}/20261124-101500/results.json").json() == {"ok": True}
    (run / "results.json").write_text('{"ok": "again"}')  # after SIGTERM the reports are written again
    assert publish(run, url, Console(file=io.StringIO()))
    assert (directory / "20261124-101500" / "results.json").read_text() == '{"ok": "again"}'
    assert (directory / "20261124-101500" / "plots" / "a.png").exists()
    assert [p.name for p in directory.iterdir()] == ["20261124-101500"]  # nothing half-written left


def tar_with(name: str, data: bytes = b"x") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        entry = tarfile.TarInfo(name)
        entry.size = len(data)
        tar.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


def test_it_refuses_what_is_not_a_run(server: tuple[str, Path]) -> None:
    url, directory = server
    assert httpx.put(f"{url}/../etc", content=tar_with("a")).status_code == 404
    assert httpx.put(f"{url}/20261124-101500", content=b"not a tar").status_code == 400
    escaping = httpx.put(f"{url}/20261124-101500", content=tar_with("../../outside"))
    assert escaping.status_code == 400 and not (directory.parent / "outside").exists()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    assert httpx.put(f"{url}/20261124-101500", content=buffer.getvalue()).status_code == 400
    assert httpx.post(f"{url}/20261124-101500", content=tar_with("a")).status_code == 501
    assert list(directory.iterdir()) == []


def test_it_refuses_a_run_that_would_unpack_beyond_its_bound(server: tuple[str, Path]) -> None:
    """A member's size is in its header: a compressed bomb is refused before a byte is written."""
    url, directory = server
    huge = tarfile.TarInfo("raw.jsonl")
    huge.size = MAX_UNPACKED_BYTES + 1
    body = gzip.compress(huge.tobuf() + b"{}" * 1000)
    answer = httpx.put(f"{url}/20261124-101500", content=body)
    assert answer.status_code == 413 and list(directory.iterdir()) == []
