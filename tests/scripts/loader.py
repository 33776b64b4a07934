"""The scripts under scripts/ are files, not a package: load one by path to test its functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from labtester.targets import REPO_ROOT

SCRIPTS = REPO_ROOT / "scripts"


def load_script(name: str) -> ModuleType:
    """scripts/<name>.py as a module (loaded once; dataclasses need it in sys.modules)."""
    module_name = f"lab_script_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
