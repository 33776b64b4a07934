"""How large a request's head may be, alike on every target: gunicorn's own defaults.

gunicorn enforces them itself (servers.gunicorn.conf passes them on); uvicorn's httptools
parser would buffer a request line or a header of any size (a 64 MB header grew a FastAPI
target's memory by 66 MB), so uvicorn's protocol (servers.uvicorn.protocol) enforces the same
numbers with the same answers: 414 for a longer request line, 431 for a longer header field or one too many.
"""

from __future__ import annotations

REQUEST_LINE_BYTES = 4094  # gunicorn's limit_request_line (method, target and version)
HEADER_FIELD_BYTES = 8190  # limit_request_field_size: one header's line, its CRLF included
HEADER_FIELDS = 100  # limit_request_fields
# The most a head may take before it is refused whatever its shape (gunicorn's own header buffer).
HEAD_BYTES = REQUEST_LINE_BYTES + HEADER_FIELDS * (HEADER_FIELD_BYTES + 2) + 4
