"""The shape of the code, checked: small modules and functions, a tester that knows targets only
through HTTP, and a results schema generated from the typed model (never kept by hand)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from labtester.results import Results
from labtester.targets import REPO_ROOT

# Where the project's Python lives: the lab, and the commands around it (make run-lab, cluster-check...).
SOURCE_FOLDERS = ("tester", "services", "scripts", "platform")
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60
SCHEMA = REPO_ROOT / "tester" / "labtester" / "results.schema.json"


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def _runs_python(path: Path) -> bool:
    with path.open("rb") as file:
        first_line = file.readline()
    return first_line.startswith(b"#!") and b"python" in first_line


def _python_sources() -> list[Path]:
    """Every *.py file of the source folders, and every command there whose #! line runs Python."""
    return sorted(
        path
        for folder in SOURCE_FOLDERS
        for path in (REPO_ROOT / folder).rglob("*")
        if path.is_file() and (path.suffix == ".py" or (path.suffix == "" and _runs_python(path)))
    )


SOURCES = _python_sources()


@pytest.mark.parametrize("path", SOURCES, ids=_relative)
def test_modules_and_functions_stay_small(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            assert node.end_lineno - node.lineno + 1 <= MAX_FUNCTION_LINES, f"{node.name} is too long"


def _imported_packages(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_tester_imports_nothing_from_the_targets() -> None:
    services = {p.name for p in (REPO_ROOT / "services").iterdir() if (p / "__init__.py").exists()}
    for path in (REPO_ROOT / "tester").rglob("*.py"):
        assert not _imported_packages(path) & services, _relative(path)


def test_the_results_schema_is_the_one_generated_from_the_model() -> None:
    # `python -m labtester schema > tester/labtester/results.schema.json` after changing the model.
    assert json.loads(SCHEMA.read_text()) == json.loads(json.dumps(Results.model_json_schema()))
