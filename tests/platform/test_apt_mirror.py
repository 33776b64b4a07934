"""platform/debian/apt_mirror.py: the Debian mirror comes from the machine's apt sources."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.script_module import REPO_ROOT, load_script

apt_mirror = load_script("platform/debian/apt_mirror.py")

DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian/
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
"""
ONE_LINE = """\
# a comment
deb [arch=amd64 signed-by=/usr/share/keyrings/cloud.gpg] https://packages.example/apt cloud-sdk-bookworm main
deb-src http://src.example/debian bookworm main
deb http://one-line.example/debian bookworm contrib main
"""


def apt_dir(tmp_path: Path, sources: dict[str, str], main_list: str | None = None) -> Path:
    (tmp_path / "sources.list.d").mkdir()
    for name, text in sources.items():
        (tmp_path / "sources.list.d" / name).write_text(text)
    if main_list is not None:
        (tmp_path / "sources.list").write_text(main_list)
    return tmp_path


def test_deb822_release_suite_with_main(tmp_path):
    sources = apt_mirror.read_sources(apt_dir(tmp_path, {"debian.sources": DEB822}))
    assert apt_mirror.debian_mirror(sources, "bookworm") == "http://mirror.example/debian"


def test_one_line_entries_skip_sources_and_other_suites(tmp_path):
    sources = apt_mirror.read_sources(apt_dir(tmp_path, {}, main_list=ONE_LINE))
    assert apt_mirror.debian_mirror(sources, "bookworm") == "http://one-line.example/debian"


def test_security_updates_and_disabled_entries_are_not_the_mirror(tmp_path):
    disabled = (
        "Enabled: no\nTypes: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\n"
    )
    only_security = DEB822.split("\n\n")[1]
    sources = apt_mirror.read_sources(apt_dir(tmp_path, {"a.sources": disabled, "b.sources": only_security}))
    assert apt_mirror.debian_mirror(sources, "bookworm") is None


def test_another_release_is_not_this_one(tmp_path):
    sources = apt_mirror.read_sources(apt_dir(tmp_path, {"debian.sources": DEB822}))
    assert apt_mirror.debian_mirror(sources, "trixie") is None


def test_debian_mirror_setting_wins():
    script = REPO_ROOT / "platform/debian/apt_mirror.py"
    env = {**os.environ, "DEBIAN_MIRROR": "http://chosen.example/debian"}
    result = subprocess.run([script, "/nonexistent"], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "http://chosen.example/debian"
