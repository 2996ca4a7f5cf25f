"""Golden files of steps, shared by the Java operators' harness tests and the Python references:
each case a list of steps whose ``emits`` the reference writes (``--write``) and both sides check."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load(golden: Path) -> dict[str, Any]:
    return json.loads(golden.read_text())  # type: ignore[no-any-return]


def write_emits(golden: Path, run_case: Callable[[dict[str, Any]], list[Any]]) -> None:
    """Rewrite every step's ``emits`` with what the reference emits for it."""
    cases = load(golden)
    for case in cases["cases"]:
        for step, out in zip(case["steps"], run_case(case), strict=True):
            step["emits"] = out
    golden.write_text(json.dumps(cases, indent=1) + "\n")
