"""`python -m workload.overhead` (make bench's figure of the CPU middleware's cost): every interface
measured, bare and wrapped, on this thread's CPU clock."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_overhead_is_measured_for_every_interface() -> None:
    measured = subprocess.run(
        [sys.executable, "-m", "workload.overhead"], capture_output=True, text=True, check=True, timeout=300
    )
    figures = json.loads(measured.stdout)
    assert figures.keys() == {"asgi", "wsgi", "gevent"}
    for figure in figures.values():
        assert figure.keys() == {"bare_us", "wrapped_us", "metrics_us", "overhead_us"}
        assert figure["wrapped_us"] > figure["bare_us"] > 0 and figure["metrics_us"] > 0
        assert figure["overhead_us"] == figure["wrapped_us"] - figure["bare_us"]
