"""Load shapes, one module (or package) each, every one behind the interface in base.py.

The registry is what this package holds: a module that defines `SHAPE` is a load shape, so a new
shape is a new module here and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from labtester.scenarios.base import LoadShape


def _discover() -> dict[str, LoadShape[Any, Any]]:
    shapes: dict[str, LoadShape[Any, Any]] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        shape = getattr(importlib.import_module(f"{__name__}.{module.name}"), "SHAPE", None)
        if isinstance(shape, LoadShape):
            shapes[shape.name] = shape
    return shapes


SHAPES = _discover()
