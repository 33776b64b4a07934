"""A simulated run's requests drawn (model.simulate serves them): their arrival times, their
kinds, and each one's costs, from the kinds' measured spreads and a seed."""

from __future__ import annotations

from collections.abc import Sequence

from labtester.sizing.arrivals import (
    SEED,
    collection_phases,
    draws_of,
    pick,
    poisson_arrivals,
    weights_bounds,
)
from labtester.sizing.configuration import Configuration
from labtester.sizing.events import Run
from labtester.sizing.kinds import RequestKind


def mean_of(kinds: Sequence[RequestKind], value: str) -> float:
    total = sum(k.weight for k in kinds)
    return sum(k.weight * float(getattr(k, value)) for k in kinds) / total


def sends(
    kinds: Sequence[RequestKind],
    rate_per_s: float,
    requests: int,
    seed: int = SEED,
    arrivals: Sequence[float] | None = None,
    picked: Sequence[int] | None = None,
) -> tuple[list[float], list[int]]:
    """Each request's arrival and kind: Poisson at the rate and in the kinds' weights, or as given."""
    kind_draws = draws_of(requests, seed)[1]
    times = list(arrivals) if arrivals is not None else poisson_arrivals(rate_per_s, requests, seed)
    bounds = weights_bounds([k.weight for k in kinds])
    kind_of = list(picked) if picked is not None else [pick(bounds, d) for d in kind_draws[: len(times)]]
    return times, kind_of


def prepared(
    kinds: Sequence[RequestKind],
    config: Configuration,
    cores: float,
    times: list[float],
    kind_of: list[int],
    requests: int,
    seed: int = SEED,
) -> Run:
    """A run of these sends with each request's costs drawn (from the seed's `requests` draws),
    before its first event."""
    _, _, worker_draws, cpu_draws, wait_draws = draws_of(requests, seed)
    client = [kinds[k].client_s for k in kind_of] if any(k.client_s for k in kinds) else []
    run = Run(config, cores, mean_of(kinds, "cores_per_process"), times, client)
    run.draws = worker_draws
    run.close = [kinds[k].close_s for k in kind_of] if any(k.close_s for k in kinds) else []
    if any(k.full_collections_per_request > 0 and k.full_collection_cpu_s > 0 for k in kinds):
        run.collections = [kinds[k].full_collections_per_request for k in kind_of]
        run.collection_cpu = [kinds[k].full_collection_cpu_s for k in kind_of]
        for process, phase in zip(run.processes, collection_phases(len(run.processes), seed), strict=True):
            process.to_collect = phase
    if any(k.cpu_by_company for k in kinds):
        # Each request's phases are set as it starts, at the company it meets (nothing reads them
        # before): none are drawn ahead.
        run.cpu, run.beside, run.wait, run.resume = ([0.0] * len(kind_of) for _ in range(4))
        scales: list[dict[int, float]] = [{} for _ in kinds]  # by kind: its CPU's scale by company

        def at_company(request: int, company: int) -> None:
            kind_at = scales[kind_of[request]]
            kind = kinds[kind_of[request]]
            if (scale := kind_at.get(company)) is None:
                scale = kind_at[company] = kind.cpu_scale(company)
            phases = kind.phases(cpu_draws[request], wait_draws[request], config, scale)
            run.cpu[request], run.beside[request], run.wait[request], run.resume[request] = phases

        run.at_company = at_company
    else:
        costs = [kinds[k].phases(cpu_draws[i], wait_draws[i], config) for i, k in enumerate(kind_of)]
        run.cpu = [cpu for cpu, _, _, _ in costs]
        run.beside = [beside for _, beside, _, _ in costs]
        run.wait = [wait for _, _, wait, _ in costs]
        run.resume = [resume for _, _, _, resume in costs]
    return run
