"""Sizing's model: from each request's measured costs, the server, processes and threads a pod
needs for the app's mix (model.py simulates, search.py searches each family's knobs, answers.py
says it). What plans, starts and proves a proposal is labtester/proposal/, above the shapes."""

from labtester.sizing.compiled import search_path

# The simulation's modules compiled, where they were built from these sources (compiled.py).
__path__ = search_path(__path__)
