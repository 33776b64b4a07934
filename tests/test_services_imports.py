"""services/ imports one way: no circle of imports between its modules, and no import of its own
code inside a function (an import there hides a dependency, usually a circle). Third-party imports
inside a function stay allowed where a comment says why (gevent, a framework only some apps use).
The whole project's check is tests/test_layout.py's; this is the services half, which stands alone."""

from __future__ import annotations

import ast
from pathlib import Path

from labtester.targets import REPO_ROOT

SERVICES = REPO_ROOT / "services"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict[str, ast.Module]:
    return {module_name(path, root): ast.parse(path.read_text()) for path in sorted(root.rglob("*.py"))}


def imported(node: ast.AST, known: dict[str, ast.Module]) -> list[str]:
    """The project's modules an import statement names (a `from package import module` names it)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in known]
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        named = [f"{node.module}.{alias.name}" for alias in node.names]
        return [name for name in named if name in known] or ([node.module] if node.module in known else [])
    return []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_circle_of_imports_in_services() -> None:
    known = modules(SERVICES)
    graph = {
        name: {other for node in ast.walk(tree) for other in imported(node, known) if other != name}
        for name, tree in known.items()
    }
    assert cycles(graph) == []


def test_no_project_import_inside_a_function_in_services() -> None:
    known = modules(SERVICES)
    own = {name.partition(".")[0] for name in known}
    inside = [
        f"{name}:{node.lineno}"
        for name, tree in known.items()
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(
            (alias.name if isinstance(node, ast.Import) else node.module or "").partition(".")[0] in own
            or (isinstance(node, ast.ImportFrom) and node.level > 0)
            for alias in node.names
        )
    ]
    assert inside == []
