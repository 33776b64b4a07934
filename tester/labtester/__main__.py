"""Command line: `python -m labtester {lab,run,bench,report,targets,schema}`.

lab      start the targets locally (from the chart's target list), run the lab, stop them;
         with --app module:app --paths /a,/b (or --traffic FILE): a team's app in every server
         configuration
run      run the lab against running targets (TESTER_* env vars: how the Job is configured)
bench    the figures the lab's accuracy rests on (see bench/)
report   rebuild a results folder's reports from its raw log
serve-results  the chart's results server: the folder read-only, finished runs taken by PUT
targets  start the measured targets locally until Ctrl-C
schema   print the results document's JSON schema (generated from the typed model)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from pydantic import SecretStr
from rich.console import Console

from labtester.applab import app_env
from labtester.bench import run_bench
from labtester.clients.local import local_clients
from labtester.follower import run_follower
from labtester.inputs import APP_FLAGS, LAB_FLAGS, BadInput, Inputs, check
from labtester.lab import run_lab, terminate
from labtester.launcher import LaunchError, free_port
from labtester.progress import LabProgress
from labtester.proposal.cluster import cluster_sizing
from labtester.proposal.lab import size_and_prove
from labtester.rawlog import RawLog
from labtester.report import write_reports
from labtester.report.compare import EarlierRun
from labtester.report.console import make_console
from labtester.report.publish import publish
from labtester.results import Results
from labtester.results_server import serve
from labtester.scenarios import TesterSettings
from labtester.settings import LabSettings
from labtester.target_group import running_targets, stop_all
from labtester.targetref import TargetRef
from labtester.targets import DEFAULT_VALUES


class _Parser(argparse.ArgumentParser):
    """A bad flag is one line (which, and why), exit 2, as every other bad input (inputs.py)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")


def _run_and_report(
    settings: LabSettings,
    console: Console,
    after_census: Any = None,
    compare: EarlierRun | None = None,
    not_started: dict[str, str] | None = None,
    after_targets: Callable[[Path, RawLog, LabProgress], None] | None = None,
    done_measuring: Callable[[], None] | None = None,
) -> Results:
    """Run the lab into a new run folder, then write its reports; `done_measuring`: called once nothing
    more is measured, before the reports (the local lab begins stopping its targets there)."""
    run_dir = settings.output_dir / time.strftime("%Y%m%d-%H%M%S")
    then = None if after_targets is None else functools.partial(after_targets, run_dir)
    if settings.clients > 1 and not settings.barrier:  # the other clients as processes here
        token = SecretStr(secrets.token_urlsafe(32))  # this run's: its clients alone join the barrier
        settings = settings.model_copy(update={"barrier": f"127.0.0.1:{free_port()}", "barrier_token": token})
        clients: Any = local_clients(settings, run_dir / "clients")
    else:
        clients = contextlib.nullcontext()
    try:  # readiness and census; each target adds its own plan once its /info is known
        with clients, LabProgress(console, 2 + len(settings.targets) + len(settings.census_only)) as progress:
            run_lab(settings, progress, run_dir, after_census, not_started, then)
    finally:
        if done_measuring is not None:
            done_measuring()
        # Also after a crash: what was measured is kept.
        results = write_reports(run_dir, console, compare, settings.plots)
        if settings.results_url:
            publish(run_dir, settings.results_url, console)
    return results


def _exit_code(results: Results) -> int:
    return 1 if results.failed_checks else 0


def command_run(args: argparse.Namespace, inputs: Inputs) -> int:
    assert inputs.settings is not None  # checked: it names targets, or is a client other than 0
    if inputs.settings.client_index > 0:  # client 0's plan, and its part of each step
        with LabProgress(make_console(), 0) as progress:
            return run_follower(inputs.settings, progress)
    settings = inputs.settings
    sizing = functools.partial(cluster_sizing, settings)  # from the chart's values, where it mounts them
    return _exit_code(_run_and_report(settings, make_console(), compare=inputs.earlier, after_targets=sizing))


def run_local_lab(inputs: Inputs, console: Console, **knobs: Any) -> Results:
    """Start measured and census-only targets locally; census-only ones stop after the census."""
    assert inputs.settings is not None
    try:
        with running_targets(inputs.targets, downstream=inputs.downstream) as started:
            targets = [
                TargetRef(name=t.name, url=t.url, measure=True) for t in started if t.definition.measure
            ]
            variants = [t for t in started if not t.definition.measure]
            census_only = [TargetRef(name=t.name, url=t.url, measure=False) for t in variants]
            settings = inputs.settings.with_targets(targets, census_only, **knobs)

            def stop_variants() -> None:
                stop_all(variants)  # idempotent: the group's stop at the end repeats their verdicts

            results = _run_and_report(
                settings, console, stop_variants, inputs.earlier, done_measuring=started.signal_stop
            )
            started.keep_logs = bool(results.failed_checks)  # a failed run keeps the targets' logs
            return results
    except LaunchError as error:
        raise SystemExit(f"error: {error}") from None


def run_app_lab(inputs: Inputs, console: Console) -> Results:
    """A team's app in every configuration of its interface that starts: one that does not is a
    finding (with its log's end), and the others are measured."""
    settings = inputs.settings
    traffic = settings.app_traffic() if settings is not None else None
    assert settings is not None and settings.app is not None and traffic is not None
    env = app_env(settings.app, traffic.routes())
    try:
        with running_targets(
            inputs.app_configurations, extra_env=env, downstream=inputs.downstream, keep_going=True
        ) as started:
            measured = settings.with_targets([TargetRef(name=t.name, url=t.url) for t in started], [])

            def sizing(run_dir: Path, log: RawLog, progress: LabProgress) -> None:
                values = inputs.values or DEFAULT_VALUES
                size_and_prove(measured, run_dir, log, progress, values, {**started.extra_env, **env})

            results = _run_and_report(
                measured,
                console,
                compare=inputs.earlier,
                not_started=started.failed,
                after_targets=sizing,
                done_measuring=started.signal_stop,
            )
            started.keep_logs = bool(results.failed_checks)  # a failed run keeps the servers' logs
            return results
    except LaunchError as error:  # the downstream mock, which the app's paths may call
        raise SystemExit(f"error: {error}") from None


def command_lab(args: argparse.Namespace, inputs: Inputs) -> int:
    if inputs.app_configurations:  # --app: checked, its configurations found (inputs.check)
        return _exit_code(run_app_lab(inputs, make_console()))
    return _exit_code(run_local_lab(inputs, make_console()))


def command_bench(args: argparse.Namespace, inputs: Inputs) -> int:
    return run_bench(inputs, make_console(), run_local_lab, run_app_lab)


def command_report(args: argparse.Namespace, inputs: Inputs) -> int:
    return _exit_code(write_reports(args.run_dir, make_console(), inputs.earlier))


def command_serve_results(args: argparse.Namespace, inputs: Inputs) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    serve(args.directory, args.listen)
    return 0


def command_schema(args: argparse.Namespace, inputs: Inputs) -> int:
    print(json.dumps(Results.model_json_schema(), indent=2))
    return 0


def command_targets(args: argparse.Namespace, inputs: Inputs) -> int:
    """Start the measured targets on their local ports and keep them up until Ctrl-C."""
    definitions = [d for d in inputs.targets if d.measure]
    downstream, ports = inputs.downstream, inputs.ports
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with running_targets(definitions, ports, downstream=downstream) as targets:
            if downstream:
                print(
                    f"{downstream.name:<14} http://127.0.0.1:{ports[downstream.name]}  (the mock downstream)"
                )
            for target in targets:
                print(f"{target.name:<14} {target.url}  ({target.definition.shown()})", flush=True)
            print("Targets are up; Ctrl-C stops them.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
    except LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def _add_lab_options(parser: argparse.ArgumentParser, app: bool) -> None:
    """The settings' flags; `app`: also --app, --paths and --traffic (lab and run measure a team's app)."""
    parser.add_argument("--config", type=Path, help="settings file (YAML/JSON); env vars and flags win")
    fields = TesterSettings.model_fields
    for name, flag in LAB_FLAGS.items():
        if name in APP_FLAGS and not app:
            continue
        field = fields[name]
        default = field.get_default(call_default_factory=True)
        shown = ",".join(default) if isinstance(default, list) else default
        types = {"work_seconds": float, "burst_max": int, "repeats": int, "clients": int, "output_dir": Path}
        about = (field.description or name).rstrip(".")
        parser.add_argument(
            flag,
            dest=name,
            type=types.get(name, str),
            help=f"{about} (default: {shown})" if default else about,
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        _add_lab_options(command, app=name != "bench")
        if name != "run":
            command.add_argument("--values", type=Path, default=DEFAULT_VALUES, help=values_help)
        if name != "bench":
            command.add_argument("--compare", type=Path, metavar="EARLIER", help=compare_help)
        command.set_defaults(handler=handler)
    report = commands.add_parser("report", help="rebuild reports from a results folder's raw log")
    report.add_argument("run_dir", type=Path)
    report.add_argument("--compare", type=Path, metavar="EARLIER", help=compare_help)
    report.set_defaults(handler=command_report)
    targets = commands.add_parser("targets", help="start the targets locally until Ctrl-C")
    targets.add_argument("--values", type=Path, default=DEFAULT_VALUES, help=values_help)
    targets.add_argument("--port", action="append", default=[], metavar="NAME=PORT", help="override a port")
    targets.set_defaults(handler=command_targets)
    commands.add_parser("schema", help="print the results JSON schema").set_defaults(handler=command_schema)
    results = commands.add_parser("serve-results", help="serve a results folder; take finished runs by PUT")
    results.add_argument("--directory", type=Path, default=Path("/results"))
    results.add_argument("--port", dest="listen", type=int, default=8080)
    results.set_defaults(handler=command_serve_results)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        inputs = check(args)  # every input, before anything starts
    except BadInput as error:
        print(f"labtester {args.command}: {' '.join(str(error).split())}", file=sys.stderr)
        return 2
    if args.command in ("lab", "run", "bench"):
        signal.signal(signal.SIGTERM, terminate)
    return int(args.handler(args, inputs))


if __name__ == "__main__":
    sys.exit(main())
