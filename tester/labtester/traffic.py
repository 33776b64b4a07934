"""What a team sends its app: a traffic file's requests (method, path, headers, body, name, weight),
one typed model, and each request as the bytes a load client writes (Outgoing).

    requests:
      - path: /search?q=shoes,red          # any characters: what HTTP needs is percent-encoded
        weight: 3
      - method: POST
        path: /orders
        name: place an order               # the label in results and answers (default: POST /orders)
        headers: {Authorization: {env: API_TOKEN, prefix: "Bearer "}}
        json: {product: 7, quantity: 1}    # or form: {field: value}

A header taken from an environment variable is named here, never held: its value is read when the
request is prepared for the wire (Outgoing), so settings, results, logs and raw.jsonl only ever
carry `{env: API_TOKEN, prefix: "Bearer "}`. That the variable is set is checked before anything
starts (inputs/traffic.py), not here: a run's results are re-read later where it may not be.

This module sits beside settings.py (which holds the traffic as a field) rather than in inputs/,
which imports the settings.
"""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote, urlencode

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from labtester.info import ControlPaths, TargetInfo
from labtester.yamlfile import read_yaml

Method = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_BODILESS = ("GET", "HEAD")
# Characters a request target carries as they are (RFC 3986's unreserved, sub-delims, ':', '@',
# '/', '?'); every other one is percent-encoded as UTF-8, and an escape already written is kept.
_AS_IS = "!$&'()*+,;=:@/?~-._"
_ESCAPE = re.compile(r"(%[0-9A-Fa-f]{2})")
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # a header name (RFC 9110's token)
# What the load client writes itself: the traffic may not set them.
_CLIENT_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


def request_target(path: str) -> str:
    """The path as a request line carries it: what HTTP needs percent-encoded, escapes kept."""
    pieces = _ESCAPE.split(path)
    return "".join(piece if index % 2 else quote(piece, safe=_AS_IS) for index, piece in enumerate(pieces))


class FromEnvironment(BaseModel):
    """A header value read from an environment variable when the request is sent, never stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    prefix: str = ""

    def value(self) -> str:
        return self.prefix + os.environ[self.env]


class TrafficRequest(BaseModel):
    """One request of the mix, as the traffic file gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    method: Method = "GET"
    path: str = Field(min_length=1)
    name: str | None = Field(None, min_length=1, max_length=200)
    headers: dict[str, str | FromEnvironment] = {}
    json_body: JsonValue = Field(None, alias="json")
    form: dict[str, str | int | float] | None = None
    weight: float = Field(1.0, gt=0, allow_inf_nan=False, strict=True)

    @field_validator("method", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("path")
    @classmethod
    def _app_path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"path {value!r} does not start with /")
        control = ControlPaths().paths()
        if unquote(value.partition("?")[0]) in control:
            raise ValueError(
                f"path {value!r} is one of the lab's control paths ({', '.join(sorted(control))})"
            )
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str | FromEnvironment]) -> dict[str, str | FromEnvironment]:
        for header, given in value.items():
            if not _TOKEN.match(header):
                raise ValueError(f"{header!r} is not a header name")
            if header.lower() in _CLIENT_HEADERS:
                raise ValueError(f"{header} is written by the load client itself")
            if isinstance(given, str) and ("\r" in given or "\n" in given):
                raise ValueError(f"{header}'s value holds a line break")
        return value

    @model_validator(mode="after")
    def _one_body_where_one_is_sent(self) -> TrafficRequest:
        if self.json_body is not None and self.form is not None:
            raise ValueError("json and form: a request has one body")
        if self.method in _BODILESS and (self.json_body is not None or self.form is not None):
            raise ValueError(f"a {self.method} request carries no body (json or form)")
        return self

    @property
    def label(self) -> str:
        """How results and answers name it: its name, else `METHOD path`."""
        return self.name or f"{self.method} {self.path}"

    @property
    def target(self) -> str:
        return request_target(self.path)

    @property
    def route(self) -> str:
        """Its path as the server matches it (decoded, no query): what /info and metrics label."""
        return unquote(self.target.partition("?")[0])

    def environment(self) -> list[str]:
        """The environment variables its headers read."""
        return [value.env for value in self.headers.values() if isinstance(value, FromEnvironment)]

    def outgoing(self) -> Outgoing:
        """This request ready for the wire, its environment values read now (KeyError if unset)."""
        headers = [(k, v.value() if isinstance(v, FromEnvironment) else v) for k, v in self.headers.items()]
        body, content_type = b"", None
        if self.json_body is not None:
            body, content_type = json.dumps(self.json_body).encode(), "application/json"
        elif self.form is not None:
            body, content_type = urlencode(self.form).encode(), "application/x-www-form-urlencoded"
        if content_type and not any(k.lower() == "content-type" for k, _ in headers):
            headers.append(("Content-Type", content_type))
        return Outgoing(self.label, self.method, self.target, tuple(headers), body)


class Traffic(BaseModel):
    """A team's traffic: its requests, each with its weight in the mix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: list[TrafficRequest] = Field(min_length=1)
    seed: int = Field(0, description="Seeds each user's choice of its next request in the mix.")

    @model_validator(mode="after")
    def _names_unique(self) -> Traffic:
        labels = [request.label for request in self.requests]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise ValueError(f"two requests share a name ({', '.join(twice)}): name one of them")
        return self

    @classmethod
    def of_paths(cls, paths: list[str]) -> Traffic:
        """`--paths /a,/b`: a GET of each, equally weighted, each named by its path."""
        return cls(requests=[TrafficRequest(path=path, name=path) for path in paths])

    def routes(self) -> list[str]:
        """The paths the app's configurations are told of (LAB_APP_PATHS), each once, in order."""
        return list(dict.fromkeys(request.route for request in self.requests))

    def named(self, label: str) -> TrafficRequest | None:
        return next((request for request in self.requests if request.label == label), None)

    def chooser(self, stream: int) -> Chooser:
        """A weighted choice of requests, its random stream set by the seed and `stream` (a user)."""
        return Chooser(
            [r.outgoing() for r in self.requests], [r.weight for r in self.requests], self.seed, stream
        )


@dataclass(frozen=True, eq=False)  # hashed by identity: the load client keys its bytes by it, cheaply
class Outgoing:
    """A request as the load client sends it: `label` names it in samples and results."""

    label: str
    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    @classmethod
    def get(cls, target: str) -> Outgoing:
        """A GET of one of the lab's own paths, labelled by it."""
        return cls(target, "GET", target)

    def wire(self, netloc: str) -> bytes:
        """The whole HTTP/1.1 request (kept-alive), head and body."""
        lines = [f"{self.method} {self.target} HTTP/1.1", f"Host: {netloc}"]
        lines += [f"{name}: {value}" for name, value in self.headers]
        if self.body or self.method not in _BODILESS:
            lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + self.body


class Chooser:
    """One user's next request, by weight, from its own seeded random stream."""

    def __init__(self, requests: list[Outgoing], weights: list[float], seed: int, stream: int) -> None:
        self.requests, self.weights = requests, weights
        self.random = random.Random(f"{seed}:{stream}")

    def __call__(self) -> Outgoing:
        return self.random.choices(self.requests, self.weights)[0]


def read_traffic(path: Path) -> Traffic:
    """The traffic file (YAML or JSON: `requests:` and its list, or the list alone); ValueError,
    in one line naming the file and the request, for anything wrong in it."""
    loaded = read_yaml(path)
    if loaded is None:
        raise ValueError(f"{path}: is empty: it lists the requests to send (requests: [...])")
    return traffic_of({"requests": loaded} if isinstance(loaded, list) else loaded, str(path))


def traffic_of(given: Any, where: str) -> Traffic:
    """The traffic given as data (a file's, or the settings'), checked; ValueError in one line."""
    try:
        return Traffic.model_validate(given)
    except ValidationError as error:
        raise ValueError(f"{where}: {_problem(error, given)}" if where else _problem(error, given)) from None


def _problem(error: ValidationError, given: Any) -> str:
    """The first problem, named by the request it is in (`requests[1] (POST /orders): weight`)."""
    problems = sorted(error.errors(), key=lambda p: p["type"] != "extra_forbidden")  # a typo first
    problem = problems[0]
    if "str" in problem["loc"] and isinstance(problem.get("input"), dict):  # a header from the environment
        problem = next((p for p in problems if "FromEnvironment" in p["loc"]), problem)
    loc = [str(part) for part in problem["loc"] if part not in ("str", "FromEnvironment")]
    where = ".".join(loc)
    if len(loc) >= 2 and loc[0] == "requests" and loc[1].isdigit():
        index = int(loc[1])
        where = f"requests[{index}]{_which(given, index)}" + "".join(f".{part}" for part in loc[2:])
    text = str(problem["msg"]).removeprefix("Value error, ")
    value = problem.get("input")
    shown = not isinstance(value, dict | list) and repr(value) not in text and len(repr(value)) <= 60
    if problem["type"] != "missing" and shown:
        text += f" (got {value!r})"
    return f"{where}: {text}" if where else text


def _which(given: Any, index: int) -> str:
    try:
        request = given["requests"][index]
        return f" ({request.get('method', 'GET')} {request['path']})"
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def with_requests(info: TargetInfo, traffic: Traffic | None) -> TargetInfo:
    """The target as the lab measures it with this traffic: each request an endpoint named by
    its label, run as /info says its route is (execution, slots), in place of the routes.
    A request whose route /info does not list is left out (the target was not told of it)."""
    if traffic is None:
        return info
    endpoints = {name: e for name, e in info.endpoints.items() if e.work != "app"}
    for request in traffic.requests:
        served = info.endpoints.get(request.route) or info.endpoints.get(request.path)
        if served is not None and served.work == "app":
            endpoints[request.label] = served.model_copy(
                update={"name": request.label, "path": request.target}
            )
    return info.model_copy(update={"endpoints": endpoints})


__all__ = ["FromEnvironment", "Outgoing", "Traffic", "TrafficRequest", "read_traffic", "with_requests"]
