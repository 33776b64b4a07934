"""Command line: `python -m labtester {lab,run,targets}`."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path

from labtester.launcher import LaunchError, running_targets
from labtester.targets import DEFAULT_VALUES, load_definitions


def _parse_ports(pairs: list[str]) -> dict[str, int]:
    ports = {}
    for pair in pairs:
        name, _, port = pair.partition("=")
        if not port.isdigit():
            raise argparse.ArgumentTypeError(f"--port takes NAME=PORT, got {pair!r}")
        ports[name] = int(port)
    return ports


def serve_targets(args: argparse.Namespace) -> int:
    """Start the measured targets on their local ports and keep them up until Ctrl-C."""
    definitions = [d for d in load_definitions(args.values) if d.measure]
    ports = {d.name: d.local_port for d in definitions} | _parse_ports(args.port)
    unknown = set(ports) - {d.name for d in definitions}
    if unknown:
        print(f"unknown target(s) in --port: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with running_targets(definitions, ports) as targets:
            for target in targets:
                print(f"{target.name:<12} {target.url}  (python -m {target.definition.module})", flush=True)
            print("Targets are up; Ctrl-C stops them.", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
    except LaunchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="labtester", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    targets = commands.add_parser("targets", help="start the targets locally until Ctrl-C")
    targets.add_argument("--values", type=Path, default=DEFAULT_VALUES, help="chart values with `targets`")
    targets.add_argument("--port", action="append", default=[], metavar="NAME=PORT", help="override a port")
    targets.set_defaults(handler=serve_targets)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
