"""Where code lives says what it is: the rules are plain Python (ruff's banned-api rule keeps
pyflink, py4j and pemja out of ais_pipeline/rules/), and only ais_pipeline/flink/jvm.py talks to
the JVM (no ``get_gateway()`` or ``_j_*`` attribute anywhere else), and no module of the package
imports one that imports it back."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

PACKAGE = Path(__file__).resolve().parents[2] / "ais_pipeline"
JVM_DOOR = PACKAGE / "flink" / "jvm.py"


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_only_the_jvm_module_touches_py4j_handles():
    offenders = []
    for path in modules():
        if path == JVM_DOOR:
            continue
        text = path.read_text()
        if re.search(r"\._j_\w+|get_gateway\(|from py4j|import py4j", text):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_the_rules_import_nothing_of_flink():
    for path in (PACKAGE / "rules").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("pyflink", "py4j", "pemja", "ais_pipeline.flink")), f"{path}: {name}"


def _imports(path: Path) -> set[str]:
    """Modules of the package that ``path`` imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ais_pipeline"):
            found.add(node.module)
            for alias in node.names:
                found.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ais_pipeline"))
    return found


def test_no_import_cycle_between_the_packages_modules():
    names = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts): p for p in modules()}
    graph = {name: {i for i in _imports(path) if i in names and i != name} for name, path in names.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail, node, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
