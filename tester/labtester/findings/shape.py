"""What a measurement shows, in the words a reader expects: how many requests ran at once.

Read from the servers' own start and finish times (the most requests whose work overlapped), not
from the makespan: a neighbour that slows every request does not make a server look serial.
"""

from __future__ import annotations


def concurrency(n: int, overlap: int) -> str:
    """n simultaneous requests of which at most `overlap` ran at once."""
    if n > 1 and overlap == 1:
        return "served one at a time"
    if overlap >= n:
        return "all at once" if n > 1 else "alone"
    return f"{overlap} at a time"
