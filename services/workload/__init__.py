"""Shared by every target: the contract (paths, /info, errors, validation), the work (kernel,
waits, mixed, downstream, fan-out) and its timing, effective cores, census, metrics, the limit.
Each request's CPU is measured by the measure package."""
