"""Where code lives says what it is. The top level is the one the project fixes; the rules are plain
Python that neither imports Flink nor touches a file; only ais_pipeline/jvm/gateway.py holds py4j
handles; no module of the package imports one that imports it back; and no test module imports
another (what tests share is in tests/support/)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "udfs" / "ais_pipeline"
JOBS = ROOT / "jobs"
GATEWAY = PACKAGE / "jvm" / "gateway.py"


def modules() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *JOBS.glob("*.py")])


def module_name(path: Path) -> str:
    if path.parent == JOBS:
        return "ais_pipeline.jobs" + ("" if path.stem == "__init__" else f".{path.stem}")
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_top_level_is_the_design_cards():
    for name in ("pyproject.toml", "jobs", "udfs", "tests", "flink-conf", "docker-compose.yml", "README.md"):
        assert (ROOT / name).exists(), name
    assert (PACKAGE / "__init__.py").is_file() and not (ROOT / "ais_pipeline").exists()


def test_only_the_gateway_module_touches_py4j_handles():
    offenders = []
    for path in modules():
        if path == GATEWAY:
            continue
        text = path.read_text()
        if re.search(r"\._j_\w+|get_gateway\(|from py4j\.java|import py4j$", text, re.M):
            offenders.append(module_name(path))
    assert offenders == []


def _imported(path: Path) -> set[str]:
    """Modules ``path`` imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


WIRING = ("ais_pipeline.functions", "ais_pipeline.jvm", "ais_pipeline.pipeline", "ais_pipeline.jobs")
IO = ("ais_pipeline.files", "ais_pipeline.postgres", "ais_pipeline.tools", "ais_pipeline.resources")


def test_the_rules_import_nothing_of_flink_and_read_no_file():
    for path in sorted((PACKAGE / "rules").rglob("*.py")):
        for name in _imported(path):
            assert not name.startswith(("pyflink", "py4j", "pemja", *WIRING, *IO)), f"{path.name}: {name}"
        text = path.read_text()
        assert not re.search(r"\bopen\(|\.read_text\(|\.write_text\(|\.iterdir\(|\.rglob\(", text), path.name


def test_the_config_knows_nothing_of_the_database():
    imported = _imported(PACKAGE / "config.py")
    assert not any(name.startswith(("ais_pipeline.postgres.", "psycopg")) or name == "ais_pipeline.postgres"
                   for name in imported)  # fmt: skip


def test_no_import_cycle_between_the_packages_modules():
    names = {module_name(p): p for p in modules()}
    graph = {name: {i for i in _imported(path) if i in names and i != name} for name, path in names.items()}
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


def test_no_test_module_imports_another():
    tests = ROOT / "tests"
    for path in sorted(tests.rglob("test_*.py")):
        for name in _imported(path):
            if name.startswith("tests."):
                assert name.startswith("tests.support"), f"{path.relative_to(tests)} imports {name}"
    for path in sorted((tests / "support").glob("*.py")):
        assert not any(n.startswith("tests.") and not n.startswith("tests.support") for n in _imported(path)), path


def test_every_python_operator_and_java_operator_is_named_and_every_stateful_one_has_a_uid():
    # The wrappers of ais_pipeline.jvm take (name, uid) first; the Python operators of the topology
    # are named and uid'd where they are added.
    topology = (PACKAGE / "pipeline" / "topology.py").read_text()
    for process in re.findall(r"\.process\(.*?\)\s*\.name\((.*?)\)\s*\.uid\((.*?)\)", topology, re.S):
        assert all(part.strip() for part in process)
    assert topology.count(".process(") == len(re.findall(r"\.process\(.*?\)\s*\.name\(.*?\)\s*\.uid\(", topology, re.S))
