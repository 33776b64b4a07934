"""An objective the requests alone miss at the p99: no rate keeps it, on any pod (more cores make no
request alone faster), so nothing is proposed, no pod is doubled for a target rate, and the answer
says the least p99 the model reaches, what P99= would get a proposal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from labtester.proposal.plan import _least_p99
from labtester.sizing.candidates import candidates
from labtester.sizing.families import RULES, Family
from labtester.sizing.kinds import RequestKind
from labtester.sizing.pod import Memory, Pod
from labtester.sizing.search import Search
from labtester.sizing.serving import sized_for
from labtester.sizing.sized import Found
from tests.tester.test_sizing_search import MEMORY, POD, SEARCHED

# A list page 5 % of whose requests take 100 ms of CPU (1.7 % of the mix): alone, the mix's p99 is
# about 0.1 s, above an objective of 0.09 s (three times the list page's mean).
TAILED = [
    RequestKind("/list", 1, 0.03, 0.0, 0.001, cpu_spread_s=(0.025,) * 38 + (0.1, 0.1)),
    RequestKind("/details", 1, 0.004, 0.0, 0.0005),
    RequestKind("/search", 1, 0.013, 0.0, 0.0006),
]
GTHREAD_AND_UVICORN = [SEARCHED[1], SEARCHED[3]]
# sqladmin 0.32.0 from PyPI (Starlette over a synchronous SQLAlchemy engine, a 20,000-row SQLite
# table): its costs as its flows measured them under uvicorn and granian-asgi on 2026-12-02
# (`make lab APP=adminapp:app` on a list page of 100 rows, a row's details and a search; its list
# page set off a 64-ms full collection every 42 requests), rounded to 6 digits: the search's inputs.
SQLADMIN = json.loads((Path(__file__).parent / "sqladmin_costs.json").read_text())
ASGI = [
    Family("uvicorn", "uvicorn", "asgi", RULES[("uvicorn", "asgi")]),
    Family("granian-asgi", "granian", "asgi", RULES[("granian", "asgi")]),
]


def test_a_target_rate_whose_objective_the_requests_alone_miss_doubles_no_pod() -> None:
    kinds = {f.name: TAILED for f in GTHREAD_AND_UVICORN}
    found = sized_for(GTHREAD_AND_UVICORN, kinds, MEMORY, POD, 0.09, 20, target_rate=20)
    assert found.serves_rate is False and found.proposed is None
    assert found.needed is None and found.needed_pod is None
    # Each family at no rate, on its configuration with the highest ceiling, its p99 alone beyond.
    for family in GTHREAD_AND_UVICORN:
        sized = found.best_by_family[family.name]
        in_pod = candidates(family, TAILED, POD, MEMORY[family.name])
        assert sized.rate_per_s == 0 and sized.p99_s > 0.09
        assert sized.candidate.ceiling_per_s == max(c.ceiling_per_s for c in in_pod)
    # One run alone per family and nothing else: no configuration judged at the rate, no bigger pod
    # (doubled five times, to 64 cores, the same search made 3,528 simulations in 9 s of CPU).
    assert found.simulations == len(GTHREAD_AND_UVICORN)
    # The answer says what P99= would get a proposal.
    said = _least_p99(found, Search(kinds, POD, 0.09, 20))
    assert said.kind == "no-rate" and "makes p99 about 0.10 s even with next to no load, on " in said.text
    # Above what they take alone, the same rate is served in the pod.
    above = sized_for(GTHREAD_AND_UVICORN, kinds, MEMORY, POD, 0.12, 20, target_rate=20)
    assert above.serves_rate and above.proposed is not None


def sqladmin(objective_s: float | None = None, target_rate: float | None = None) -> tuple[Found, Search]:
    kinds = {name: [_kind(k) for k in ks] for name, ks in SQLADMIN["kinds"].items()}
    memory = {name: Memory(**m) for name, m in SQLADMIN["memory"].items()}
    floors = {name: tuple(f) for name, f in SQLADMIN["floors"].items()}
    pod = Pod(SQLADMIN["pod"]["cores"], SQLADMIN["pod"]["memory_bytes"])
    objective = objective_s or SQLADMIN["objective_s"]
    found = sized_for(ASGI, kinds, memory, pod, objective, 20, target_rate, floors=floors)
    return found, Search(kinds, pod, objective, 20, floors=floors)


def _kind(measured: dict[str, Any]) -> RequestKind:
    fields = dict(measured)
    for name in ("cpu_spread_s", "wait_spread_s"):
        fields[name] = tuple(fields[name])
    fields["cpu_by_company"] = tuple(tuple(point) for point in fields["cpu_by_company"])
    return RequestKind(**fields)


def test_a_published_apps_default_objective_below_its_requests_alone_gets_no_proposal() -> None:
    # Its default objective (87 ms: twice its slowest request's mean alone) is below what its list
    # page takes alone at the p99 (its collections: 93-94 ms). A short run at 14.9/s read p99 80 ms,
    # and granian-asgi with 3 workers was proposed there, its proof predicted at 0.11 s.
    found, state = sqladmin()
    assert found.proposed is None
    said = _least_p99(found, state)
    assert said.kind == "no-rate" and "makes p99 about 93 ms even with next to no load" in said.text, said
    # With RATE=40, no pod doubled (the old search: 504 simulations, 9 s of CPU): the same said.
    rated, state = sqladmin(target_rate=40)
    assert rated.serves_rate is False and rated.needed_pod is None
    assert rated.simulations == len(ASGI)
    assert all(s.rate_per_s == 0 and s.p99_s > state.objective_s for s in rated.best_by_family.values())
    assert "makes p99 about 94 ms even with next to no load" in _least_p99(rated, state).text
    # At P99=0.2 s (above it), a proposal.
    above, _ = sqladmin(0.2)
    assert above.proposed is not None
