"""The questions bursts answer: does `async def` help CPU-bound work, how many workers, when does
offloading pay, what changes for I/O-bound work. Each from the curves of the endpoints whose
execution (from /info) the question is about; a question with no such endpoint is left out."""

from __future__ import annotations

from labtester.findings.wording import plural
from labtester.info import EndpointInfo, TargetInfo
from labtester.scenarios.bursts.analyse import MODEL_AGREEMENT, Point
from labtester.scenarios.bursts.curves import Curve, caveat
from labtester.views import Answer, Chart

# A difference between two lone requests smaller than this is a clock's and a scheduler's noise.
HAND_OFF_NOISE_S = 0.005


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _at(curve: Curve, n: int) -> Point | None:
    return next((p for p in curve.points if p.n == n), None)


def _how(curve: Curve) -> str:
    """How the target runs this endpoint, in a few words, from its /info."""
    info, endpoint = curve.target.info, curve.endpoint
    workers = info.workers if info else 0
    match endpoint.execution:
        case "event_loop":
            return "event loop" if workers == 1 else f"{workers} event loops"
        case "process_pool":
            return f"pool of {plural(endpoint.slots or 0, 'process', 'processes')}"
        case "workers":
            return plural(workers, "worker")
        case "threads":
            return f"{workers} x {info.threads} threads" if info and info.threads > 1 else "threads"
        case "thread_pool":
            return "threads"
        case "greenlets":
            return "greenlets"
        case _:
            return "async waits"


def _measured(curve: Curve, point: Point, first: bool = False) -> str:
    """`3.1x one on fastapi's event loop (model 3.0x)`: the model named in the first of a list."""
    model = ("model " if first else "") + _x(curve.model_times(point))
    return (
        f"{_x(curve.times(point))}{' one' if first else ''} on {curve.target.name}'s {_how(curve)} ({model})"
    )


def _listed(pairs: list[tuple[Curve, Point]]) -> str:
    return ", ".join(_measured(c, p, first=i == 0) for i, (c, p) in enumerate(pairs))


def _chart(key: str, title: str, used: list[Curve]) -> Chart:
    return Chart(
        name=f"answer-{key}",
        title=title,
        x_label="simultaneous requests n",
        y_label="time of n / time of one",
        lines=[c.line(_line_label(c, used)) for c in used],
    )


def _line_label(curve: Curve, used: list[Curve]) -> str:
    """`flask-1x: 2 workers`, with the endpoint where the same target has several lines."""
    label = f"{curve.target.name}: {_how(curve)}"
    return label + f" ({curve.endpoint.name})" if sum(c.target is curve.target for c in used) > 1 else label


def _first_per_target(curves: list[Curve]) -> list[Curve]:
    first: dict[str, Curve] = {}
    for curve in curves:
        first.setdefault(curve.target.name, curve)
    return list(first.values())


def async_cpu(curves: list[Curve]) -> Answer | None:
    cpu = [c for c in curves if c.endpoint.work == "cpu"]
    blocked = _first_per_target([c for c in cpu if c.endpoint.execution == "event_loop"])
    if not blocked or (point := blocked[0].largest) is None:
        return None
    loop, n = blocked[0], point.n
    # Every server's event loops (one per worker), then what runs CPU work in processes.
    loops = [c for c in blocked[1:] if _at(c, n)]
    others = [*loops, *(c for c in cpu if c.endpoint.execution in ("process_pool", "workers") and _at(c, n))]
    alone = point.overlap == 1
    answer = (
        "No: CPU work in an async def blocks the event loop, which serves one request at a time; only "
        "processes run it in parallel."
        if alone
        else f"Only partly: at most {point.overlap} of {n} ran at once on the event loop."
    )
    pairs = [(loop, point), *((c, p) for c in others if (p := _at(c, n)))]
    evidence = f"{n} simultaneous CPU requests took {_listed(pairs)}"
    used = [loop, *others]
    return Answer(
        order=10,
        key="async-cpu",
        question="Does async def help CPU-bound work?",
        answer=answer,
        evidence=evidence + ".",
        caveat=caveat(used),
        chart=_chart("async-cpu", "CPU-bound requests: event loop against processes", used),
    )


def _in_workers(curve: Curve) -> bool:
    """CPU work the server's worker processes run themselves (no pool): sync workers, and the event
    loops, threads or greenlets of a server with several workers."""
    info, execution = curve.target.info, curve.endpoint.execution
    several = info is not None and info.workers > 1 and execution in ("event_loop", "threads", "greenlets")
    return curve.endpoint.work == "cpu" and (execution == "workers" or several)


def workers(curves: list[Curve]) -> Answer | None:
    measured = [c for c in curves if c.target.info and c.largest]
    cpu = _first_per_target([c for c in measured if _in_workers(c)])
    io = [c for c in measured if c.endpoint.execution == "workers" and c.endpoint.work == "io"]
    if not cpu and not io:
        return None
    info = (cpu or io)[0].target.info
    assert info is not None
    cores = info.effective_cores
    servers = list(dict.fromkeys(c.target.info.server for c in cpu + io if c.target.info))
    whose = f"{servers[0]} " if len(servers) == 1 else ""
    parts = []
    if cpu:
        n = min(c.largest.n for c in cpu if c.largest)
        floor = f"no fewer than n/{cores} = {n / cores:.1f}x"
        pairs = [(c, p) for c in cpu if (p := _at(c, n))]
        parts.append(
            f"{n} simultaneous CPU requests took {_listed(pairs)}; on {plural(cores, 'core')}, {floor}"
        )
    if io:
        n = min(c.largest.n for c in io if c.largest)
        parts.append(f"{n} waits took {_listed([(c, p) for c in io if (p := _at(c, n))])}")
    return Answer(
        order=20,
        key="workers",
        question=f"How many {whose}workers?",
        answer=(
            f"For CPU work, about one per core: more share the same {plural(cores, 'core')}; for waits, "
            "one per request waiting at once (or threads or greenlets instead)."
        ),
        evidence=". ".join(parts) + ".",
        caveat=caveat(cpu + io),
        chart=_chart("workers", f"{' and '.join(servers)} workers: CPU work and waits", cpu + io),
    )


def offload(curves: list[Curve]) -> Answer | None:
    for pool in (c for c in curves if c.endpoint.execution == "process_pool" and c.endpoint.work == "cpu"):
        loop = next(
            (
                c
                for c in curves
                if c.target is pool.target
                and c.endpoint.execution == "event_loop"
                and c.endpoint.work == "cpu"
            ),
            None,
        )
        if loop is not None and pool.largest and loop.endpoint.single_s and pool.endpoint.single_s:
            return _offload(pool, loop)
    return None


def _faster(a: float | None, b: float | None) -> bool:
    """a is shorter than b by more than one repeat's noise."""
    return a is not None and b is not None and a < b * (1 - MODEL_AGREEMENT)


def _offload_pays(pool: Curve, loop: Curve, pairs: list[tuple[Point, Point]]) -> str:
    """From which n offloading pays, judged only on bursts the machine left alone."""
    pays = next((p.n for p, q in pairs if _faster(pool.times(p, True), loop.times(q, True))), None)
    expected = next((p.n for p, q in pairs if _faster(pool.model_times(p), loop.model_times(q))), None)
    parallel = f"the {_how(pool)} runs them in parallel while the event loop stays free"
    if pays:
        from_n = plural(pays, "simultaneous CPU request")
        return f"From {from_n} on: {parallel}; alone, a request pays the hand-off."
    judged = [p.n for p, q in pairs if pool.times(p, True) and loop.times(q, True)]
    model = f"the model expects it from {expected}" if expected else "the model does not expect it to"
    if not judged:
        return f"The machine interfered with every burst that could tell; {model} ({parallel})."
    return f"Not up to {max(judged)} simultaneous CPU requests in this run, where {model}: see the findings."


def _offload(pool: Curve, loop: Curve) -> Answer:
    pairs = [(p, q) for p in pool.points if (q := _at(loop, p.n))]
    p, q = pairs[-1]
    single, alone = pool.endpoint.single_s or 0.0, loop.endpoint.single_s or 0.0
    cost = single - alone
    offloaded, blocked = pool.times(p), loop.times(q)
    answer = _offload_pays(pool, loop, pairs)
    return Answer(
        order=30,
        key="offload",
        question="When does offloading pay?",
        answer=answer,
        evidence=(
            f"{p.n} CPU requests took {_x(offloaded)} one offloaded against {_x(blocked)} on "
            f"{loop.target.name}'s blocked event loop (model {_x(pool.model_times(p))} against "
            f"{_x(loop.model_times(q))}); {_hand_off(cost, alone)}."
        ),
        caveat=caveat([pool, loop]),
        chart=_chart("offload", f"{pool.target.name}: offloaded against the blocked loop", [loop, pool]),
    )


def _hand_off(cost_s: float, alone_s: float) -> str:
    if abs(cost_s) < HAND_OFF_NOISE_S or not alone_s:
        return f"one request alone took about as long offloaded ({cost_s * 1000:+.0f} ms)"
    return f"one request alone took {cost_s * 1000:+.0f} ms ({cost_s / alone_s * 100:+.0f} %) offloaded"


def io_bound(curves: list[Curve]) -> Answer | None:
    io = _first_per_target([c for c in curves if c.endpoint.work == "io" and c.largest])
    if not io:
        return None
    n = min(c.largest.n for c in io if c.largest)
    held = _listed([(c, p) for c in io if (p := _at(c, n))])
    return Answer(
        order=40,
        key="io-bound",
        question="What changes for I/O-bound work?",
        answer=(
            "Waits need a slot, not a core: async code, greenlets and threads overlap them all, sync "
            "workers one per worker."
        ),
        evidence=f"{n} simultaneous waits took {held}.",
        caveat=caveat(io),
        chart=_chart("io-bound", "I/O-bound requests on every target", io),
    )


def concerns(key: str, info: TargetInfo, endpoint: EndpointInfo) -> bool:
    """Whether a target's endpoint, once measured, could change the answer `key`: an endpoint of the
    kind its question picks curves from. The offload answer is the first target's with a pool and
    a blocked loop: once found, a later target leaves it as it is."""
    cpu = endpoint.work == "cpu"
    match key:
        case "async-cpu":
            return cpu and endpoint.execution in ("event_loop", "process_pool", "workers")
        case "workers":
            several = info.workers > 1 and endpoint.execution in ("event_loop", "threads", "greenlets")
            return endpoint.execution == "workers" or (cpu and several)
        case "offload":
            return False
        case "io-bound":
            return endpoint.work == "io"
    return True  # an answer this does not know: settled only at the end


def answers(curves: list[Curve]) -> list[Answer]:
    found = (async_cpu(curves), workers(curves), offload(curves), io_bound(curves))
    return [a for a in found if a is not None]
