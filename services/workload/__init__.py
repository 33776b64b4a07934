"""Workload code shared by every target: CPU kernel, I/O wait, effective cores, census, metrics."""
