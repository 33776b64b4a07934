"""Import a script of the project (platform/..., scripts/...) as a module, to test its parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = REPO_ROOT / "scripts"


def load_script(relative_path: str) -> ModuleType:
    """The file as a module, loaded once (dataclasses look their module up in sys.modules)."""
    path = REPO_ROOT / relative_path
    module_name = f"lab_script_{path.stem}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
