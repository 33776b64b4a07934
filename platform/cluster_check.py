#!/usr/bin/env python3
"""`make cluster-check`: the chart on a real Kubernetes control plane with simulated nodes.

Usage: LAB_CACHE=... HELM=... python platform/cluster_check.py   (make cluster-check builds first)

What it starts and checks: the package control_plane_check (its docstring); this file is the command.
"""

import sys
from pathlib import Path

if __name__ == "__main__":
    # platform/ is first on sys.path when this file runs; the check runs run-lab's own steps
    # (scripts/lab_release) against a real API server.
    sys.path.append(str(Path(__file__).resolve().parents[1] / "scripts"))
    from control_plane_check.main import entry

    entry()
