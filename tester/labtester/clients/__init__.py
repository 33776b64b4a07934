"""Many clients, one record: the lab's load sent by P clients (processes locally, pods of an Indexed
Job on Kubernetes) after a common release, and their raw rows merged before any statistic.

- crew.py:    a client's index i of P, its part of the work, its meetings at the barrier;
- link.py:    a client's one connection to the barrier: answers, keep-alive, the run's break;
- barrier.py: the barrier client 0 serves (who joins, deadlines, the raw records of the others);
- clock.py:   each client's clock against client 0's (measured at joining and at the end);
- spent.py:   what a client itself spent (its sending thread's CPU, its wait for a core);
- merge.py:   every client's records of one step joined into one, before analysis;
- local.py:   P - 1 more client processes on this machine (`--clients P`).

Only the mechanics of many clients live here. The other things called "client" are the load
connections each client sends its requests on (load.py's LoadClient, on connections.py) and the
control calls to a target (control.py, httpx); a client other than 0 runs its part of the plan
with the lab's own code (follower.py, beside lab.py); what the clients spent is assembled into the
results by assembly/usage.py and shown by report/clients.py.
"""
