"""Client 0 hands the finished results folder to the results server (the chart's), which keeps it
on the results volume. The clients of an Indexed Job run on any node, so none of them mounts that
volume (a ReadWriteOnce claim would pin every one of them to its node); client 0 sends the folder
as one tar stream instead, also after a crash or SIGTERM, as the reports are written then too.
"""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path

import httpx
from rich.console import Console

from labtester.control import classify_error

ATTEMPTS = 5
RETRY_S = 3.0


def archive(run_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(run_dir, arcname=".")
    return buffer.getvalue()


def publish(run_dir: Path, results_url: str, console: Console) -> bool:
    """PUT the folder to `results_url`/<run id>; whether the server kept it."""
    if not run_dir.exists():
        return False
    body, url = archive(run_dir), f"{results_url.rstrip('/')}/{run_dir.name}"
    error = ""
    for _ in range(ATTEMPTS):
        try:
            httpx.put(url, content=body, timeout=60).raise_for_status()
            console.print(f"Published: {url}/", highlight=False)
            return True
        except httpx.HTTPError as failure:
            error = classify_error(failure)
            time.sleep(RETRY_S)
    console.print(f"error: the results server at {results_url} did not take the run: {error}", markup=False)
    return False
