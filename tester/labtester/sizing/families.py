"""The server families sizing can search, derived from the chart's `app.configurations`.

A family is what one of those entries runs (gunicorn's sync, gthread or gevent workers, uvicorn,
granian), so a family the values add is searched once its knobs are known here: how many
requests one process runs at once (the env knob that sets it, and the values tried), how its
workers take connections, and whether its requests' CPU is preempted (threads) or runs to its
end (greenlets, event loops). Its settings besides the knobs are the entry's own env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from labtester.sizing.configuration import Accept, Configuration
from labtester.sizing.kinds import RequestKind
from labtester.targets import DEFAULT_VALUES, TEAM_APP, TargetDefinition, load_app_configurations

# The env knobs sizing sets itself; an entry's own values of them are dropped.
KNOBS = ("LAB_WORKERS", "LAB_WORKER_MULTIPLIER", "LAB_THREADS", "LAB_WORKER_CONNECTIONS")
THREADS = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
# A gevent worker's greenlet holds a connection for as long as the client keeps it alive, idle or
# not: fewer than the clients' connections and the rest wait unaccepted (2 x 16 stalled a proof
# run here at 400 connections open), so the counts start where the lab's own gevent does, and a
# configuration is searched only where they cover a proof's client (candidates.holds_the_clients).
CONNECTIONS = (100, 250, 500, 1000)
SERVERS = {"asgi": "uvicorn", "wsgi": "gunicorn"}  # as `python -m serve` serves each interface by default


@dataclass(frozen=True)
class Rule:
    """How one family runs requests, and which knob sets how many a process runs at once."""

    accept: Accept
    preemptive: bool
    knob: str | None  # env variable of requests per process; None: fixed (below)
    fixed: int | None  # requests per process where there is no knob; None: no limit
    choices: tuple[int, ...] = ()
    unit: str = ""  # "threads", "connections"
    processes_per_core: int = 2  # processes tried: 1 .. this x cores
    # Greenlets: a request runs until it yields on I/O, and a path that never does holds every other
    # request of its worker (their answers after a wait included) for its whole CPU.
    greenlets: bool = False
    # An event loop: what its requests hand to threads runs beside it (Configuration.threads_beside).
    threads_beside: bool = False


RULES: dict[tuple[str, str], Rule] = {
    ("gunicorn", "sync"): Rule("shared", True, None, 1, processes_per_core=8),
    ("gunicorn", "gthread"): Rule("per_worker", True, "LAB_THREADS", None, THREADS, "threads"),
    ("gunicorn", "gevent"): Rule(
        "per_worker", False, "LAB_WORKER_CONNECTIONS", None, CONNECTIONS, "connections", greenlets=True
    ),
    ("uvicorn", "asgi"): Rule("per_worker", False, None, None, threads_beside=True),
    ("granian", "asgi"): Rule("per_worker", False, None, None, threads_beside=True),
    ("granian", "wsgi"): Rule("per_worker", True, "LAB_THREADS", None, THREADS, "threads"),
}


@dataclass(frozen=True)
class Family:
    name: str  # gthread, sync, gevent, uvicorn, granian-wsgi
    server: str
    interface: str
    rule: Rule
    env: dict[str, str] = field(default_factory=dict)  # the entry's own settings, without the knobs
    fixed_targets: tuple[str, ...] = ()  # the values' configurations of this family (measured)

    def per_process_choices(self) -> tuple[int | None, ...]:
        return self.rule.choices if self.rule.knob else (self.rule.fixed,)

    def configuration(self, processes: int, per_process: int | None) -> Configuration:
        rule = self.rule
        return Configuration(
            self.name, processes, per_process, rule.accept, rule.preemptive, rule.threads_beside
        )

    def knobs(self, processes: int, per_process: int | None) -> dict[str, str]:
        knobs = {"LAB_WORKERS": str(processes)}
        if self.rule.knob and per_process is not None:
            knobs[self.rule.knob] = str(per_process)
        return knobs

    def definition(self, name: str, processes: int, per_process: int | None) -> TargetDefinition:
        """A target of this family with these knobs, as the launcher starts a values entry."""
        return TargetDefinition(name, TEAM_APP, 0, env={**self.env, **self.knobs(processes, per_process)})

    def holds(self, kinds: Sequence[RequestKind], objective_s: float) -> bool:
        """Whether the model's prediction can hold on this mix: not on greenlets with a path that
        never yields (the Flask shop's gevent, predicted p99 0.59 s at 18.1/s, measured 6.10 s)."""
        return not (self.rule.greenlets and never_yielding(kinds, objective_s))

    def label(self, processes: int, per_process: int | None) -> str:
        """`gunicorn gthread, 2 workers x 24 threads`"""
        server = f"{self.server} {self.name}" if self.server == "gunicorn" else self.name
        workers = f"{processes} worker{'s' * (processes != 1)}"
        each = f" x {per_process} {self.rule.unit}" if self.rule.knob and per_process is not None else ""
        return f"{server}, {workers}{each}"


def never_yielding(kinds: Sequence[RequestKind], objective_s: float) -> list[str]:
    """The kinds that compute a tenth of the objective or more and wait (yield) next to nothing (a
    tenth of their CPU; /report's 0.01 ms beside 133 ms), where the mix has others: on greenlets
    each holds every other request of its worker, their answers included, for its whole CPU, for
    as long as what the model cannot see makes it (where the others yield, the hub's order)."""
    if len(kinds) < 2:
        return []
    return [k.name for k in kinds if k.mean_cpu_s > 0.1 * objective_s and k.mean_wait_s < 0.1 * k.mean_cpu_s]


def family_key(entry_env: dict[str, str], interface: str) -> tuple[str, str]:
    server = entry_env.get("LAB_SERVER") or SERVERS.get(interface, "")
    if server == "gunicorn":
        return server, entry_env.get("LAB_WORKER_CLASS", "sync")
    return server, interface


def family_name(server: str, kind: str) -> str:
    """gunicorn's worker class (`gthread`), an interface's default server (`uvicorn`), or both
    (`granian-wsgi`): `kind` is gunicorn's worker class or the interface."""
    return kind if server == "gunicorn" else server if server == SERVERS.get(kind) else f"{server}-{kind}"


def families(
    interface: str, values: Path = DEFAULT_VALUES, prefix: str = ""
) -> tuple[list[Family], list[str]]:
    """The families of the interface's configurations in the values, and those sizing cannot
    search (no knobs known for them), named. `prefix`: before each configuration's name, the
    target it was measured as (a cluster's `app-`)."""
    found: dict[tuple[str, str], Family] = {}
    unknown = []
    for definition in load_app_configurations(values, interface):
        key = family_key(definition.env, interface)
        rule = RULES.get(key)
        if rule is None:
            unknown.append(f"{definition.name} ({'/'.join(key)}): sizing knows no knobs for it")
            continue
        if key in found:
            previous = found[key]
            found[key] = Family(
                previous.name, previous.server, interface, rule, previous.env,
                (*previous.fixed_targets, prefix + definition.name),
            )  # fmt: skip
            continue
        env = {k: v for k, v in definition.env.items() if k not in KNOBS}
        found[key] = Family(family_name(*key), key[0], interface, rule, env, (prefix + definition.name,))
    return list(found.values()), unknown
