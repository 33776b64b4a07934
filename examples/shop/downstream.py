"""The services the shop calls over HTTP, played by the lab's downstream mock (LAB_DOWNSTREAM_URL):
a payment provider that answers in 150 ms and an inventory service that answers in 40 ms."""

from __future__ import annotations

import os

PAYMENT_WAIT_MS = 150
STOCK_WAIT_MS = 40
TIMEOUT_S = 30.0
UNSET = {
    "detail": "LAB_DOWNSTREAM_URL is not set: this path calls the lab's downstream mock "
    "(`make lab` starts it and sets the variable)"
}


def base_url() -> str | None:
    return os.environ.get("LAB_DOWNSTREAM_URL") or None


def payment_path() -> str:
    return f"/test/io-bound/{PAYMENT_WAIT_MS}"


def stock_path() -> str:
    return f"/test/io-bound/{STOCK_WAIT_MS}"
