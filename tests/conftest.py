from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


# -- where the suite's time goes: each module's setup, calls and teardown, summed -----------------

_MODULE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::", 1)[0]
    _MODULE_SECONDS[module] = _MODULE_SECONDS.get(module, 0.0) + report.duration


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if len(_MODULE_SECONDS) < 2:
        return
    terminalreporter.section("seconds by module")
    ranked = sorted(_MODULE_SECONDS.items(), key=lambda kv: -kv[1])
    for module, seconds in ranked:
        terminalreporter.write_line(f"{seconds:8.1f}  {module}")
    terminalreporter.write_line(f"{sum(_MODULE_SECONDS.values()):8.1f}  (all)")
