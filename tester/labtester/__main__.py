"""Command line: `python -m labtester {lab,run,report,targets}`.

lab      start the targets locally (from the chart's target list), run the lab, stop them
run      run the lab against running targets (TESTER_* env vars: how the Job is configured)
report   rebuild a results folder's reports from its raw log
targets  start the measured targets locally until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from labtester.bench import client_capacity, kernel_stability, print_bench, print_capacity
from labtester.lab import run_lab, terminate
from labtester.launcher import LaunchError, running_targets
from labtester.progress import LabProgress
from labtester.report import write_reports
from labtester.report.console import make_console
from labtester.settings import SCENARIOS, TargetRef, TesterSettings
from labtester.targets import DEFAULT_VALUES, load_definitions, load_downstream

LOCAL_WORK_SECONDS = 0.5  # N for `lab`: short enough for a few minutes on a laptop


def _parse_ports(pairs: list[str]) -> dict[str, int]:
    ports = {}
    for pair in pairs:
        name, _, port = pair.partition("=")
        if not port.isdigit():
            raise SystemExit(f"--port takes NAME=PORT, got {pair!r}")
        ports[name] = int(port)
    return ports


def _settings(args: argparse.Namespace, **extra: Any) -> TesterSettings:
    overrides = {
        "work_seconds": args.work_seconds,
        "burst_max": args.burst_max,
        "repeats": args.repeats,
        "output_dir": args.output,
        "scenarios": args.scenarios,
        **extra,
    }
    return TesterSettings.load(args.config, **overrides)


def _run_and_report(settings: TesterSettings, console: Console, after_census: Any = None) -> dict[str, Any]:
    run_dir = settings.output_dir / time.strftime("%Y%m%d-%H%M%S")
    bursts = len(settings.endpoints) * (1 + settings.burst_max * settings.repeats)
    per_target = (1 + bursts if "bursts" in settings.scenarios else 0) + len(settings.scenarios)
    steps = 2 + len(settings.targets) * per_target
    try:
        with LabProgress(console, steps) as progress:
            run_lab(settings, progress, run_dir, after_census)
    finally:
        document = write_reports(run_dir, console)  # also after a crash: what was measured is kept
    return document


def _exit_code(document: dict[str, Any]) -> int:
    return 1 if document["failed_checks"] else 0


def command_run(args: argparse.Namespace) -> int:
    console = make_console()
    try:
        settings = _settings(args)
    except ValidationError as error:
        console.print(f"invalid settings:\n{error}", markup=False)
        return 2
    if not settings.targets:
        console.print("no targets: set TESTER_TARGETS=name=url,... or use `lab` to start them locally")
        return 2
    return _exit_code(_run_and_report(settings, console))


def command_lab(args: argparse.Namespace) -> int:
    return _exit_code(run_local_lab(args, make_console()))


def run_local_lab(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Start measured and census-only targets locally; census-only ones stop after the census."""
    definitions = load_definitions(args.values)
    if args.work_seconds is None:
        args.work_seconds = LOCAL_WORK_SECONDS
    try:
        with running_targets(definitions, downstream=load_downstream(args.values)) as started:
            targets = [
                TargetRef(name=t.name, url=t.url, measure=True) for t in started if t.definition.measure
            ]
            variants = [t for t in started if not t.definition.measure]
            census_only = [TargetRef(name=t.name, url=t.url, measure=False) for t in variants]
            settings = _settings(args, targets=targets, census_only=census_only)

            def stop_variants() -> None:
                for variant in variants:
                    variant.stop()

            return _run_and_report(settings, console, stop_variants)
    except LaunchError as error:
        raise SystemExit(f"error: {error}") from None
    except ValidationError as error:
        raise SystemExit(f"invalid settings:\n{error}") from None


def command_bench(args: argparse.Namespace) -> int:
    """The figures the lab's accuracy rests on: kernel stability, calibration error, model ratios,
    and the load client's own capacity next to wrk's."""
    console = make_console()
    kernel = kernel_stability()
    fastapi = next(d for d in load_definitions(args.values) if d.name == "fastapi")
    with running_targets([fastapi]) as (target,):
        capacity = client_capacity(target.url)
    document = run_local_lab(args, console)
    print_bench(kernel, document, console)
    print_capacity(capacity, console)
    return _exit_code(document)


def command_report(args: argparse.Namespace) -> int:
    document = write_reports(args.run_dir, make_console())
    return 1 if document["failed_checks"] else 0


def command_targets(args: argparse.Namespace) -> int:
    """Start the measured targets on their local ports and keep them up until Ctrl-C."""
    definitions = [d for d in load_definitions(args.values) if d.measure]
    downstream = load_downstream(args.values)
    servers = [*definitions, *([downstream] if downstream else [])]
    ports = {d.name: d.local_port for d in servers} | _parse_ports(args.port)
    unknown = set(ports) - {d.name for d in servers}
    if unknown:
        print(f"unknown target(s) in --port: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with running_targets(definitions, ports, downstream=downstream) as targets:
            if downstream:
                print(
                    f"{downstream.name:<12} http://127.0.0.1:{ports[downstream.name]}  (the mock downstream)"
                )
            for target in targets:
                print(f"{target.name:<12} {target.url}  (python -m {target.definition.module})", flush=True)
            print("Targets are up; Ctrl-C stops them.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
    except LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _add_lab_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="settings file (YAML/JSON); env vars and flags win")
    parser.add_argument("--work-seconds", type=float, help="N: server time of one CPU request")
    parser.add_argument("--burst-max", type=int, help="K: bursts of n = 1..K simultaneous requests")
    parser.add_argument("--repeats", type=int, help="repeats of each burst point")
    parser.add_argument("--output", type=Path, help="results folder (a subfolder per run)")
    parser.add_argument(
        "--scenarios", help=f"comma-separated load shapes (default bursts): {', '.join(SCENARIOS)}"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="labtester", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    lab = commands.add_parser("lab", help="start targets locally, run the lab, stop them")
    _add_lab_options(lab)
    lab.add_argument("--values", type=Path, default=DEFAULT_VALUES, help="chart values with `targets`")
    lab.set_defaults(handler=command_lab)
    run = commands.add_parser("run", help="run the lab against running targets (TESTER_TARGETS)")
    _add_lab_options(run)
    run.set_defaults(handler=command_run)
    bench = commands.add_parser("bench", help="kernel stability, then a local lab's accuracy figures")
    _add_lab_options(bench)
    bench.add_argument("--values", type=Path, default=DEFAULT_VALUES, help="chart values with `targets`")
    bench.set_defaults(handler=command_bench)
    report = commands.add_parser("report", help="rebuild reports from a results folder's raw log")
    report.add_argument("run_dir", type=Path)
    report.set_defaults(handler=command_report)
    targets = commands.add_parser("targets", help="start the targets locally until Ctrl-C")
    targets.add_argument("--values", type=Path, default=DEFAULT_VALUES, help="chart values with `targets`")
    targets.add_argument("--port", action="append", default=[], metavar="NAME=PORT", help="override a port")
    targets.set_defaults(handler=command_targets)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("lab", "run", "bench"):
        signal.signal(signal.SIGTERM, terminate)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
