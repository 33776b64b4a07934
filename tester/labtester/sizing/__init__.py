"""Sizing's model: from each request's measured costs, the server, processes and threads a pod
needs for the app's mix (model.py simulates, search.py searches each family's knobs, answers.py
says it). What plans, starts and proves a proposal is labtester/proposal/, above the shapes."""
