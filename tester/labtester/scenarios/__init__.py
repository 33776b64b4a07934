"""Load shapes, one module (or package) each, every one behind the interface in base.py.

The registry is what this package holds: a module that defines `SHAPE` is a load shape, so a new
shape is a new module here and nothing else. The registry stands above the settings and the
results document, which know no shape: it completes the document with the shapes' summaries and
conclusions, builds TesterSettings (the lab's settings with a section per shape that has knobs)
and checks the shapes a run names.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from pydantic import create_model, field_validator
from pydantic.fields import FieldInfo

from labtester.results import admit_shapes
from labtester.scenarios.base import LoadShape
from labtester.settings import DEFAULT_APP_SCENARIOS, LabSettings


def _discover() -> dict[str, LoadShape[Any, Any]]:
    shapes: dict[str, LoadShape[Any, Any]] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        shape = getattr(importlib.import_module(f"{__name__}.{module.name}"), "SHAPE", None)
        if isinstance(shape, LoadShape):
            shapes[shape.name] = shape
    return shapes


SHAPES = _discover()
admit_shapes(
    [shape.summary_model for shape in SHAPES.values()],
    [shape.conclusion_model for shape in SHAPES.values() if shape.conclusion_model],
)


def _known_scenarios(cls: type[LabSettings], value: list[str]) -> list[str]:
    unknown = sorted(set(value) - set(SHAPES))
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; known: {list(SHAPES)}")
    if not value:  # a run that measures nothing would pass every check
        raise ValueError(f"no load shape named; known: {list(SHAPES)}")
    return value


def _with_shapes() -> type[LabSettings]:
    """The lab's settings, its `scenarios` checked against the registry, plus a section per load
    shape that has knobs (closed, ramp, sweep, rate, ...)."""
    scenarios = FieldInfo.merge_field_infos(
        LabSettings.model_fields["scenarios"],
        description=f"Load shapes: {', '.join(SHAPES)}; an app's default: {','.join(DEFAULT_APP_SCENARIOS)}.",
    )
    sections: dict[str, Any] = {
        name: (shape.settings_model, FieldInfo(default_factory=shape.settings_model))
        for name, shape in SHAPES.items()
        if shape.settings_model is not None
    }
    return create_model(
        "TesterSettings",
        __base__=LabSettings,
        __validators__={"_known_scenarios": field_validator("scenarios")(_known_scenarios)},
        scenarios=(list[str], scenarios),
        **sections,
    )


TesterSettings: type[LabSettings] = _with_shapes()
