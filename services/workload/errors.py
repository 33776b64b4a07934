"""Request validation and error bodies shared by every target, in one shape: FastAPI's.

FastAPI validates its parameters itself and answers 422 in this shape; targets on other
frameworks validate with `bounded_int` and answer `InvalidInput.body` with 422, so one client
reads them all. Every other error body is {"detail": message}.
"""

from __future__ import annotations

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

# FastAPI's own words for a parameter that is no integer.
NOT_AN_INTEGER = "Input should be a valid integer, unable to parse string as an integer"


def is_digits(value: str) -> bool:
    """A number here is ASCII digits and nothing else: no sign, space, `_`, `.0` or other script's
    digits (Python's int() takes them all, pydantic's some; the frameworks would differ)."""
    return value.isascii() and value.isdigit()


def _digits_only(value: object) -> object:
    if isinstance(value, str) and not is_digits(value):
        raise PydanticCustomError("int_parsing", NOT_AN_INTEGER)
    return value


# In a FastAPI parameter's Annotated[int, DIGITS, Path(...)]: the same numbers as bounded_int.
DIGITS = BeforeValidator(_digits_only)


class InvalidInput(Exception):
    """A request parameter that is no integer or out of its bounds: answered 422 with `body`."""

    def __init__(self, location: list[str], message: str, value: object) -> None:
        super().__init__(message)
        self.body = {"detail": [{"loc": location, "msg": message, "input": value, "type": "value_error"}]}


def bounded_int(value: str, location: list[str], low: int, high: int) -> int:
    """`value` (ASCII digits) as an integer in [low, high], else InvalidInput naming `location`
    (e.g. query, k)."""
    if not isinstance(value, str) or not is_digits(value):
        raise InvalidInput(location, NOT_AN_INTEGER, value)
    number = int(value)
    if not low <= number <= high:
        raise InvalidInput(location, f"Input should be between {low} and {high}", value)
    return number


def downstream_failure(error: Exception) -> dict[str, str]:
    """The 502 body when the downstream call fails: the failure's kind, never its internals."""
    return {"detail": f"downstream: {type(error).__name__}"}


def too_many(limit: int) -> dict[str, str]:
    """The 429 body beyond the in-flight limit (workload.limits)."""
    return {"detail": f"Too many requests in flight (limit {limit})"}
