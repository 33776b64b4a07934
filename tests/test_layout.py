"""The shape of the code, checked: small modules and functions, a tester that knows targets only
through HTTP, and a results schema generated from the typed model (never kept by hand)."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from labtester.results import Results
from labtester.scenarios import SHAPES
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
    assert SHAPES  # the shapes' registry completed the document with their summaries (admit_shapes)
    assert json.loads(SCHEMA.read_text()) == json.loads(json.dumps(Results.model_json_schema()))


# The import graph: every project Python file, the lab's and the commands', examples and charts too.
GRAPH_FOLDERS = (*SOURCE_FOLDERS, "examples", "charts")
# Project imports that may sit inside a function, each for a reason the README's Development section
# names: nothing else is imported late.
LATE_IMPORTS = {
    # Django's models can be imported only once django.setup() has run (the app's start runs it).
    ("examples/django_shop/database.py", "examples.django_shop.models"),
}


def _module_name(path: Path) -> str:
    """The dotted name Python imports a file by: its packages up to the first folder without one."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


GRAPH_SOURCES = sorted(
    path
    for folder in GRAPH_FOLDERS
    for path in (REPO_ROOT / folder).rglob("*")
    if path.is_file() and (path.suffix == ".py" or (path.suffix == "" and _runs_python(path)))
)
MODULES = {_module_name(path): _relative(path) for path in GRAPH_SOURCES if path.suffix == ".py"}


def _project_module(name: str) -> str | None:
    """The project module an imported name loads last (a.b.c: the longest of a.b.c, a.b, a)."""
    parts = name.split(".")
    return next((m for m in (".".join(parts[:i]) for i in range(len(parts), 0, -1)) if m in MODULES), None)


def _named_modules(path: Path, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The project modules one import statement names (a name taken from a package may be a module
    of it), a relative import resolved against the file's own package."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        package = _module_name(path).split(".")[: None if path.name == "__init__.py" else -1]
        origin = package[: len(package) - node.level + 1] if node.level else []
        base = ".".join([*origin, node.module] if node.module else origin)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
    return {module for module in map(_project_module, names) if module}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """Every project module a file imports, and whether the import sits inside a function."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.extend((module, in_function) for module in _named_modules(path, node))
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inside)

    visit(ast.parse(path.read_text()), False)
    return found


IMPORTS = {_relative(path): _imports(path) for path in GRAPH_SOURCES}


def _circles(room: Callable[[str], str] = lambda file: file) -> list[list[str]]:
    """The import graph's strongly connected components of more than one room (Tarjan's); a room is
    a file, or what `room` makes of it (its folder)."""
    edges: dict[str, list[str]] = {}
    for file, imported in IMPORTS.items():
        edges[room(file)] = sorted(
            (set(edges.get(room(file), [])) | {room(MODULES[m]) for m, _ in imported}) - {room(file)}
        )
    for targets in list(edges.values()):
        for target in targets:
            edges.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def connect(file: str) -> None:
        index[file] = low[file] = len(index)
        stack.append(file)
        for other in edges[file]:
            if other not in index:
                connect(other)
                low[file] = min(low[file], low[other])
            elif other in stack:
                low[file] = min(low[file], index[other])
        if low[file] == index[file]:
            component: list[str] = []
            while not component or component[-1] != file:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for file in edges:
        if file not in index:
            connect(file)
    return circles


@pytest.mark.parametrize("folder", GRAPH_FOLDERS)
def test_no_file_imports_itself_through_others(folder: str) -> None:
    """No circle: every file's imports can be read before it, so the code reads one way."""
    assert [c for c in _circles() if any(file.startswith(folder + "/") for file in c)] == []


def _tester_floor(file: str) -> str:
    """A file's room on the tester's floors: its package right under labtester/ (scenarios/,
    sizing/, proposal/, ...) or the module itself."""
    parts = file.split("/")
    return "/".join(parts[:3]) if parts[:2] == ["tester", "labtester"] else file


def test_the_testers_floors_read_top_to_bottom() -> None:
    """No package of the tester imports one that imports it back (shapes -> sizing's model is fine;
    sizing -> shapes as well would be an arrow back up), so its floors read one way."""
    assert [c for c in _circles(_tester_floor) if c[0].startswith("tester/")] == []


@pytest.mark.parametrize("folder", GRAPH_FOLDERS)
def test_project_imports_stand_at_the_top(folder: str) -> None:
    """An import inside a function hides an arrow (often one that runs back up a circle)."""
    late = [
        (file, module)
        for file, imported in IMPORTS.items()
        if file.startswith(folder + "/")
        for module, in_function in imported
        if in_function and (file, module) not in LATE_IMPORTS
    ]
    assert late == []
