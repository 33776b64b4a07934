"""What a team's app answered on a path that is not a success: a finding of its own, counted.

A 404 or a 500 (an app that raised) is the app's answer, measured like any other: the report says
how often each path gave it on each configuration, and the run goes on with the other paths. Only
an HTTP status is the app's answer; a dropped connection or a timeout stays a failure.
"""

from __future__ import annotations

from labtester.findings import Finding

# (configuration, requests sent to the path, failures by type) for each configuration
Counts = list[tuple[str, int, dict[str, int]]]


def is_answer(error: str) -> bool:
    """An HTTP status the app answered with (`HTTP 500`), not a transport failure."""
    return error.startswith("HTTP ")


def app_answers(path: str, what: str, counts: Counts) -> Finding | None:
    """`/x answered HTTP 500 on 30 of 30 burst requests (sync-1x 6 of 6, ...)`, or None."""
    statuses = sorted({error for _, _, failures in counts for error in failures if is_answer(error)})
    if not statuses:
        return None
    sent = sum(count for _, count, _ in counts)
    parts = []
    for status in statuses:
        hit = [(name, count, failures[status]) for name, count, failures in counts if failures.get(status)]
        where = ", ".join(f"{name} {answered} of {count}" for name, count, answered in hit)
        parts.append(f"{status} on {sum(a for _, _, a in hit)} of {sent} {what} requests ({where})")
    return Finding(
        kind="answer",
        subject=path,
        text=f"{path} answered {'; '.join(parts)}: the app's own answer, not a failure of the lab or "
        "the servers; every other path was measured as planned.",
    )
