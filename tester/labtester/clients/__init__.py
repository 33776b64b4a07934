"""Many clients, one record: the lab's load sent by P clients (processes locally, pods of an Indexed
Job on Kubernetes) after a common release, and their raw rows merged before any statistic.

- crew.py:    a client's index i of P, its part of the work, its meetings at the barrier;
- barrier.py: the barrier client 0 serves (and the raw records it keeps for the others);
- load.py:    what a client itself spent (CPU per request, the share of its core);
- merge.py:   every client's records of one step joined into one, before analysis;
- local.py:   P - 1 more client processes on this machine (`--clients P`).
"""
