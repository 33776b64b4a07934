"""`python -m labtester serve-results`: the chart's results server. It serves the results volume
read-only (GET, as `python -m http.server` did) and takes one thing in: a finished run, which the
tester's client 0 PUTs as a tar stream (report/publish.py) to /<run id>. The tester's pods run on
any node and mount no volume; this server alone does.

A run is unpacked beside the others, then renamed into place, so a reader never sees half of one;
a later upload of the same run (after SIGTERM, the reports written again) replaces it. Only
run-id names are taken, and only plain files and folders inside the run's folder (tar's own `data`
filter too, where this Python has it).
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RUN_ID = re.compile(r"^/([0-9]{8}-[0-9]{6})/?$")  # the tester's results/<time> folder names
MAX_RUN_BYTES = 512 * 2**20
MAX_UNPACKED_BYTES = 4 * MAX_RUN_BYTES  # what a run may hold once unpacked: a gzip may hide far more


class ResultsHandler(SimpleHTTPRequestHandler):
    def do_PUT(self) -> None:
        match = RUN_ID.match(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if not match:
            self.send_error(HTTPStatus.NOT_FOUND, "PUT takes /<run id> (YYYYmmdd-HHMMSS)")
            return
        if not 0 < length <= MAX_RUN_BYTES:
            self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a run is 1 to {MAX_RUN_BYTES} bytes")
            return
        root = Path(self.directory)
        refused: tuple[HTTPStatus, str] | None = None
        # The answer goes once what was unpacked is gone: a client that reads the folder on a
        # refusal could find the upload's temporary folder there (a full test run, 2026-11-30).
        try:
            with tempfile.TemporaryDirectory(dir=root, prefix=".upload-") as unpacked:
                try:
                    body: Any = _Limited(self.rfile, length)
                    unpacked_bytes = 0
                    with tarfile.open(fileobj=body, mode="r|*") as archive:
                        for member in archive:
                            unpacked_bytes += member.size  # what extracting it writes, told before
                            if unpacked_bytes > MAX_UNPACKED_BYTES:
                                raise _TooLarge(f"a run unpacks to at most {MAX_UNPACKED_BYTES} bytes")
                            archive.extract(_checked(member), unpacked, **EXTRACT)
                except _TooLarge as error:
                    refused = HTTPStatus.REQUEST_ENTITY_TOO_LARGE, str(error)
                except (tarfile.TarError, OSError, EOFError, ValueError) as error:
                    refused = HTTPStatus.BAD_REQUEST, f"not a tar stream of a run: {error}"
                else:
                    final = root / match.group(1)
                    if final.exists():
                        shutil.rmtree(final)
                    Path(unpacked).rename(final)
                    Path(unpacked).mkdir()  # TemporaryDirectory removes what it made
        except OSError as error:  # storing it, or clearing what was unpacked: this side's failure
            refused = HTTPStatus.INTERNAL_SERVER_ERROR, f"the run could not be stored: {error}"
        if refused is not None:
            self.send_error(*refused)
            return
        self.send_response(HTTPStatus.CREATED)
        self.send_header("Content-Length", "0")
        self.end_headers()


class _TooLarge(Exception):
    pass


# tar's own `data` filter where this Python has it (3.11.4 and later); _checked in any case.
EXTRACT: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def _checked(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """Only folders and plain files, inside the run's folder."""
    parts = Path(member.name).parts
    if not (member.isfile() or member.isdir()) or member.name.startswith("/") or ".." in parts:
        raise ValueError(f"{member.name}: not a plain file or folder inside the run")
    return member


class _Limited:
    """The request body: exactly Content-Length bytes, never a read past it."""

    def __init__(self, stream: object, length: int) -> None:
        self.stream, self.left = stream, length

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data: bytes = self.stream.read(size) if size else b""  # type: ignore[attr-defined]
        self.left -= len(data)
        return data


def serve(directory: Path, port: int) -> None:
    handler = partial(ResultsHandler, directory=str(directory))
    with ThreadingHTTPServer(("", port), handler) as server:
        server.serve_forever()
