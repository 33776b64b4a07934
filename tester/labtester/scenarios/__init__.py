"""Load shapes, one module each. Bursts are the lab's core (bursts.py, driven by lab.py); the
others share one interface: `run(url, settings, timeout_s)` returns raw records,
`summarize(records)` the results section."""

from labtester.scenarios import closed, ramp, rate, sweep

LOAD_SHAPES = {"closed": closed, "ramp": ramp, "sweep": sweep, "rate": rate}
