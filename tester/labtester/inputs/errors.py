"""What every check raises: one line naming the input and the reason."""

from __future__ import annotations

from typing import Any


class BadInput(Exception):
    """One line: which input, and what is wrong with it."""


def reason(error: Exception) -> str:
    """An OS error's reason without its repetition of the path."""
    return str(getattr(error, "strerror", None) or error).lower()


def message(problem: Any) -> str:
    """One of pydantic's errors, with the value it refused when it is short."""
    text = str(problem["msg"]).removeprefix("Value error, ")
    given = problem.get("input")
    shown = str(given) in text  # a file's name, already leading its own line
    if given is not None and not shown and not isinstance(given, dict | list) and len(repr(given)) <= 60:
        text += f" (got {given!r})"
    return text
