#!/usr/bin/env python3
"""The content tag of one image: a digest of everything its build reads from the context.

Usage: scripts/image_tag.py DOCKERFILE [--build-arg KEY=VALUE]... [--context DIR]
Prints a tag such as `src-0123456789abcdef`. It changes when the Dockerfile, a build argument or
any file its COPY/ADD instructions take from the context changes, and only then: a rebuilt image
gets a new tag (so `helm upgrade` rolls its pods) and an unchanged one keeps its tag (so its pods
stay). Files the context's .dockerignore excludes are not read, as `docker build` never sees them.
The `src-` prefix keeps every tag a string: an all-digit or `1e10` tag would be read as a number.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

PREFIX = "src-"
DIGEST_CHARS = 16
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def instructions(dockerfile: str) -> Iterator[tuple[str, str]]:
    """(INSTRUCTION, arguments) per logical line: continuations joined, comments dropped."""
    logical = ""
    for line in dockerfile.splitlines():
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            logical += line.rstrip()[:-1] + " "
            continue
        logical += line
        keyword, _, arguments = logical.strip().partition(" ")
        logical = ""
        yield keyword.upper(), arguments.strip()


def context_sources(dockerfile: str, build_args: dict[str, str]) -> list[str]:
    """Every context path COPY and ADD name (not `--from` a stage), with build arguments expanded."""
    values = dict(build_args)
    sources: list[str] = []
    for keyword, arguments in instructions(dockerfile):
        if keyword == "ARG":
            name, has_default, default = arguments.partition("=")
            values.setdefault(name.strip(), default.strip().strip("\"'") if has_default else "")
        elif keyword in ("COPY", "ADD"):
            words = json.loads(arguments) if arguments.startswith("[") else shlex.split(arguments)
            flags = [word for word in words if word.startswith("--")]
            if any(flag.startswith("--from=") for flag in flags):
                continue
            paths = [word for word in words if not word.startswith("--")][:-1]  # the last is the destination
            sources += [VARIABLE.sub(lambda m: values.get(m[1] or m[2], ""), path) for path in paths]
    return sources


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regex: `**` any folders, `*` and `?` within one name."""
    parts = re.split(r"(\*\*/?|\*|\?)", pattern.strip("/"))
    translated = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(translated.get(part, re.escape(part)) for part in parts))


def ignore_rules(context: Path) -> list[tuple[re.Pattern[str], bool]]:
    """(pattern, excludes) per line of .dockerignore; `!` re-includes. The last match wins."""
    path = context / ".dockerignore"
    lines = path.read_text().splitlines() if path.exists() else []
    rules = []
    for line in (line.strip() for line in lines):
        if line and not line.startswith("#"):
            excludes = not line.startswith("!")
            rules.append((pattern_regex(os.path.normpath(line.lstrip("!"))), excludes))
    return rules


def ignored(relative: str, rules: list[tuple[re.Pattern[str], bool]]) -> bool:
    """Docker's rule: a pattern matches a path or any folder above it."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for regex, excludes in rules:
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            excluded = excludes
    return excluded


def context_files(context: Path, sources: list[str]) -> list[Path]:
    """The files `docker build` reads for these sources, sorted, without .dockerignore'd ones."""
    rules = ignore_rules(context)
    files: set[Path] = set()
    for source in sources:
        for match in glob.glob(os.path.normpath(source), root_dir=context) or [source]:
            root = context / match
            found = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
            files.update(f for f in found if not ignored(f.relative_to(context).as_posix(), rules))
    return sorted(files)


def content_tag(dockerfile: Path, build_args: dict[str, str], context: Path) -> str:
    text = dockerfile.read_text()
    digest = hashlib.sha256()
    digest.update(text.encode())
    for key, value in sorted(build_args.items()):
        digest.update(f"\0arg {key}={value}".encode())
    for path in context_files(context, context_sources(text, build_args)):
        executable = os.access(path, os.X_OK)
        digest.update(f"\0file {path.relative_to(context).as_posix()} {executable}\0".encode())
        digest.update(path.read_bytes())
    return PREFIX + digest.hexdigest()[:DIGEST_CHARS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dockerfile", type=Path)
    parser.add_argument("--build-arg", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--context", type=Path, default=Path.cwd())
    args = parser.parse_args()
    build_args = dict(arg.partition("=")[::2] for arg in args.build_arg)
    context = args.context.resolve()
    print(content_tag(args.dockerfile.resolve(), build_args, context))


if __name__ == "__main__":
    main()
