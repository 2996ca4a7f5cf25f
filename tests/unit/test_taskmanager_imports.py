"""What the job's Python operators import, they import with their modules: on a standalone cluster
in thread mode a TaskManager's one interpreter keeps the modules of the first job it ran, loaded
from that job's copy of the package, which Flink deletes when the job ends. A module of the package
imported later, inside a function, would be looked for in the deleted copy, and a second job on
that TaskManager (a restore from a savepoint, say) would fail with ``cannot import name``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.jobs import ROOT

pytestmark = pytest.mark.unit


def operator_modules() -> dict[str, str]:
    """The package's modules that importing the operators' module loads, with their files."""
    code = (
        "import json, sys, ais_pipeline.functions.operators\n"
        "print(json.dumps({n: m.__file__ for n, m in sys.modules.items()"
        " if n.startswith('ais_pipeline') and getattr(m, '__file__', None)}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT / "udfs"), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def package_modules() -> set[str]:
    udfs = ROOT / "udfs"
    return {
        ".".join(p.relative_to(udfs).with_suffix("").parts).removesuffix(".__init__")
        for p in (udfs / "ais_pipeline").rglob("*.py")
    }


def late_imports(path: Path, package: set[str]) -> list[tuple[str, str]]:
    """The package's modules a file imports inside a function or a class (not at its top), each
    with where: ``from ais_pipeline import shore`` imports ``ais_pipeline.shore``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and (inner.module or "").startswith("ais_pipeline"):
                for alias in inner.names:
                    sub = f"{inner.module}.{alias.name}"
                    found.append((f"{path.name}:{inner.lineno}", sub if sub in package else str(inner.module)))
            elif isinstance(inner, ast.Import):
                found += [
                    (f"{path.name}:{inner.lineno}", a.name) for a in inner.names if a.name.startswith("ais_pipeline")
                ]
    return found


def test_the_operators_modules_import_at_their_top_every_module_of_the_package_they_use():
    """A module imported inside a function must be one the operators' module loaded already."""
    modules = operator_modules()
    assert "ais_pipeline.rules.dedup" in modules and "ais_pipeline.shore" in modules

    package = package_modules()
    late = [i for f in sorted(set(modules.values())) for i in late_imports(Path(f), package)]

    assert [(where, module) for where, module in late if module not in modules] == []


def test_an_import_inside_a_function_is_found(tmp_path: Path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from ais_pipeline import shore\n    return shore\n")

    assert late_imports(module, package_modules()) == [("m.py:4", "ais_pipeline.shore")]
