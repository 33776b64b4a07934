#!/usr/bin/env python3
"""Print the Debian mirror this machine's apt already uses, for debootstrap.

Reads the apt sources (one-line `sources.list` and deb822 `.sources` files) and picks the first
`deb` entry that serves this Debian release's main suite with the main component: never a mirror
written into the project. DEBIAN_MIRROR, when set, wins (a machine whose apt has no Debian source).
Usage: apt_mirror.py [APT_ETC_DIR]   (default /etc/apt; the release comes from /etc/os-release)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Source:
    types: tuple[str, ...]
    uris: tuple[str, ...]
    suites: tuple[str, ...]
    components: tuple[str, ...]


def parse_one_line(text: str) -> list[Source]:
    """Entries of a sources.list file: `deb [options] URI SUITE COMPONENT...`."""
    sources = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "[" in line:  # options such as [arch=amd64 signed-by=...]
            head, _, rest = line.partition("[")
            line = head + rest.partition("]")[2]
        fields = line.split()
        if len(fields) >= 3:
            sources.append(Source((fields[0],), (fields[1],), (fields[2],), tuple(fields[3:])))
    return sources


def parse_deb822(text: str) -> list[Source]:
    """Entries of a deb822 .sources file: stanzas of `Key: value` lines separated by blank lines."""
    sources = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for raw in stanza.splitlines():
            if raw.startswith("#"):
                continue
            if raw[:1].isspace() and key:  # a continuation line (e.g. an inline Signed-By key)
                fields[key] += " " + raw.strip()
            elif ":" in raw:
                key, _, value = raw.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if fields.get("enabled", "yes").lower() == "no" or "uris" not in fields:
            continue
        sources.append(
            Source(
                tuple(fields.get("types", "").split()),
                tuple(fields["uris"].split()),
                tuple(fields.get("suites", "").split()),
                tuple(fields.get("components", "").split()),
            )
        )
    return sources


def debian_mirror(sources: list[Source], codename: str) -> str | None:
    """The first URI that serves `codename` (the release itself, not -security) with main."""
    for source in sources:
        if "deb" in source.types and codename in source.suites and "main" in source.components:
            return source.uris[0].rstrip("/")
    return None


def read_sources(apt_etc: Path) -> list[Source]:
    sources: list[Source] = []
    main_list = apt_etc / "sources.list"
    if main_list.is_file():
        sources += parse_one_line(main_list.read_text())
    parts = apt_etc / "sources.list.d"
    for path in sorted(parts.glob("*")) if parts.is_dir() else []:
        if path.suffix == ".list":
            sources += parse_one_line(path.read_text())
        elif path.suffix == ".sources":
            sources += parse_deb822(path.read_text())
    return sources


def os_release(path: Path = Path("/etc/os-release")) -> dict[str, str]:
    pairs = (line.partition("=") for line in path.read_text().splitlines() if "=" in line)
    return {key: value.strip('"') for key, _, value in pairs}


def main() -> None:
    if os.environ.get("DEBIAN_MIRROR"):
        print(os.environ["DEBIAN_MIRROR"])
        return
    apt_etc = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/etc/apt")
    release = os_release()
    mirror = None
    if release.get("ID") == "debian" and release.get("VERSION_CODENAME"):
        mirror = debian_mirror(read_sources(apt_etc), release["VERSION_CODENAME"])
    if mirror is None:
        sys.exit(
            f"No Debian mirror in {apt_etc}'s sources for this machine "
            f"({release.get('PRETTY_NAME', 'unknown')}): set DEBIAN_MIRROR=http://<mirror>/debian"
        )
    print(mirror)


if __name__ == "__main__":
    main()
