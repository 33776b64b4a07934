"""Sizing: from each request's measured costs, the server, processes and threads a pod needs for
the app's mix (model.py simulates, search.py searches, plan.py plans what to prove, prove.py
starts and loads it, answers.py says it); lab.py is the one call the app lab makes."""
