"""The traffic's environment, checked before anything starts: every variable a header reads is set.

The traffic file itself is read and checked with the settings (labtester.traffic, the model); its
headers' values are read from the environment only when a request is sent, so this is the one
place that says, up front, that one is missing.
"""

from __future__ import annotations

import os

from labtester.inputs.errors import BadInput
from labtester.traffic import Traffic


def check_environment(traffic: Traffic, named: str) -> None:
    """`named`: how the user gave the traffic (--traffic FILE, TESTER_TRAFFIC, a key)."""
    for index, request in enumerate(traffic.requests):
        for header, value in request.headers.items():
            if not isinstance(value, str) and value.env not in os.environ:
                raise BadInput(
                    f"{named}: requests[{index}] ({request.label}).headers.{header}: the environment "
                    f"variable {value.env} is not set"
                )
