"""Command line: `python -m labtester {lab,run,bench,report,targets,schema}`.

lab      start the targets locally (from the chart's target list), run the lab, stop them
run      run the lab against running targets (TESTER_* env vars: how the Job is configured)
bench    the figures the lab's accuracy rests on (see bench.py)
report   rebuild a results folder's reports from its raw log
serve-results  the chart's results server: the folder read-only, finished runs taken by PUT
targets  start the measured targets locally until Ctrl-C
schema   print the results document's JSON schema (generated from the typed model)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from labtester.clients.follow import run_follower
from labtester.clients.local import local_clients
from labtester.clients.publish import publish
from labtester.lab import run_lab, terminate
from labtester.launcher import LaunchError, free_port, running_targets
from labtester.progress import LabProgress
from labtester.rawlog import RAW_LOG
from labtester.report import write_reports
from labtester.report.console import make_console
from labtester.results import Results
from labtester.settings import LabSettings, TargetRef, TesterSettings
from labtester.targets import DEFAULT_VALUES, load_definitions, load_downstream

# The knobs a flag can set; each flag's help shows the one default, from TesterSettings.
LAB_FLAGS = {
    "work_seconds": "--work-seconds",
    "burst_max": "--burst-max",
    "repeats": "--repeats",
    "scenarios": "--scenarios",
    "clients": "--clients",
    "output_dir": "--output",
}


def _parse_ports(pairs: list[str]) -> dict[str, int]:
    ports = {}
    for pair in pairs:
        name, _, port = pair.partition("=")
        if not port.isdigit():
            raise SystemExit(f"--port takes NAME=PORT, got {pair!r}")
        ports[name] = int(port)
    return ports


def _results_folder(text: str) -> Path:
    """--compare's folder, checked before a run starts rather than after it ends."""
    path = Path(text)
    if not ((path / "results.json").exists() or (path / RAW_LOG).exists()):
        raise argparse.ArgumentTypeError(f"{text} is not a results folder (no results.json or {RAW_LOG})")
    return path


def _settings(args: argparse.Namespace, **extra: Any) -> LabSettings:
    overrides = {field: getattr(args, field) for field in LAB_FLAGS} | extra
    return TesterSettings.load(args.config, **overrides)


def _run_and_report(
    settings: LabSettings, console: Console, after_census: Any = None, compare: Path | None = None
) -> Results:
    run_dir = settings.output_dir / time.strftime("%Y%m%d-%H%M%S")
    if settings.clients > 1 and not settings.barrier:  # the other clients as processes here
        settings = settings.model_copy(update={"barrier": f"127.0.0.1:{free_port()}"})
        clients: Any = local_clients(settings, run_dir / "clients")
    else:
        clients = contextlib.nullcontext()
    try:  # readiness and census; each target adds its own plan once its /info is known
        with clients, LabProgress(console, 2 + len(settings.targets) + len(settings.census_only)) as progress:
            run_lab(settings, progress, run_dir, after_census)
    finally:
        results = write_reports(run_dir, console, compare)  # also after a crash: what was measured is kept
        if settings.results_url:
            publish(run_dir, settings.results_url, console)
    return results


def _exit_code(results: Results) -> int:
    return 1 if results.failed_checks else 0


def command_run(args: argparse.Namespace) -> int:
    console = make_console()
    try:
        settings = _settings(args)
    except ValidationError as error:
        console.print(f"invalid settings:\n{error}", markup=False)
        return 2
    if settings.client_index > 0:  # a client other than 0: client 0's plan, its part of each step
        with LabProgress(console, 0) as progress:
            return run_follower(settings, progress)
    if not settings.targets:
        console.print("no targets: set TESTER_TARGETS=name=url,... or use `lab` to start them locally")
        return 2
    return _exit_code(_run_and_report(settings, console, compare=args.compare))


def run_local_lab(args: argparse.Namespace, console: Console, **extra: Any) -> Results:
    """Start measured and census-only targets locally; census-only ones stop after the census."""
    definitions = load_definitions(args.values)
    try:
        with running_targets(definitions, downstream=load_downstream(args.values)) as started:
            targets = [
                TargetRef(name=t.name, url=t.url, measure=True) for t in started if t.definition.measure
            ]
            variants = [t for t in started if not t.definition.measure]
            census_only = [TargetRef(name=t.name, url=t.url, measure=False) for t in variants]
            settings = _settings(args, targets=targets, census_only=census_only, **extra)

            def stop_variants() -> None:
                for variant in variants:
                    variant.stop()

            return _run_and_report(settings, console, stop_variants, getattr(args, "compare", None))
    except LaunchError as error:
        raise SystemExit(f"error: {error}") from None
    except ValidationError as error:
        raise SystemExit(f"invalid settings:\n{error}") from None


def command_lab(args: argparse.Namespace) -> int:
    return _exit_code(run_local_lab(args, make_console()))


def command_bench(args: argparse.Namespace) -> int:
    from labtester.bench import run_bench

    return run_bench(args, make_console(), run_local_lab)


def command_report(args: argparse.Namespace) -> int:
    return _exit_code(write_reports(args.run_dir, make_console(), args.compare))


def command_serve_results(args: argparse.Namespace) -> int:
    from labtester.results_server import serve

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(args.directory, args.port)
    return 0


def command_schema(_: argparse.Namespace) -> int:
    print(json.dumps(Results.model_json_schema(), indent=2))
    return 0


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
                    f"{downstream.name:<14} http://127.0.0.1:{ports[downstream.name]}  (the mock downstream)"
                )
            for target in targets:
                print(f"{target.name:<14} {target.url}  (python -m {target.definition.module})", flush=True)
            print("Targets are up; Ctrl-C stops them.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
    except LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _add_lab_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="settings file (YAML/JSON); env vars and flags win")
    fields = TesterSettings.model_fields
    for name, flag in LAB_FLAGS.items():
        field = fields[name]
        default = field.get_default(call_default_factory=True)
        shown = ",".join(default) if isinstance(default, list) else default
        types = {"work_seconds": float, "burst_max": int, "repeats": int, "clients": int, "output_dir": Path}
        parser.add_argument(
            flag,
            dest=name,
            type=types.get(name, str),
            help=f"{(field.description or name).rstrip('.')} (default: {shown})",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="labtester", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    values_help = "chart values with the `targets` list"
    compare_help = "an earlier results folder: every figure beside its earlier value, changes judged by noise"
    for name, handler, help_text in (
        ("lab", command_lab, "start targets locally, run the lab, stop them"),
        ("run", command_run, "run the lab against running targets (TESTER_TARGETS)"),
        ("bench", command_bench, "the figures the lab's accuracy rests on, with and without a CPU hog"),
    ):
        command = commands.add_parser(name, help=help_text)
        _add_lab_options(command)
        if name != "run":
            command.add_argument("--values", type=Path, default=DEFAULT_VALUES, help=values_help)
        if name != "bench":
            command.add_argument("--compare", type=_results_folder, metavar="EARLIER", help=compare_help)
        command.set_defaults(handler=handler)
    report = commands.add_parser("report", help="rebuild reports from a results folder's raw log")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--compare", type=_results_folder, metavar="EARLIER", help=compare_help)
    report.set_defaults(handler=command_report)
    targets = commands.add_parser("targets", help="start the targets locally until Ctrl-C")
    targets.add_argument("--values", type=Path, default=DEFAULT_VALUES, help=values_help)
    targets.add_argument("--port", action="append", default=[], metavar="NAME=PORT", help="override a port")
    targets.set_defaults(handler=command_targets)
    commands.add_parser("schema", help="print the results JSON schema").set_defaults(handler=command_schema)
    results = commands.add_parser("serve-results", help="serve a results folder; take finished runs by PUT")
    results.add_argument("--directory", type=Path, default=Path("/results"))
    results.add_argument("--port", type=int, default=8080)
    results.set_defaults(handler=command_serve_results)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("lab", "run", "bench"):
        signal.signal(signal.SIGTERM, terminate)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
