"""Where the shop's templates are (both versions render the same files, each with its framework's
own Jinja2 integration)."""

from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).parent / "templates"
PRODUCTS_LIMIT = 50
