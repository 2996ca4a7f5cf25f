"""The docs hold what the code does: every relative link of README.md, CHANGELOG.md and docs/
resolves (to a file, and to a heading when it names one), and every flag they name is a flag of
one of the project's commands (or of the other program the text quotes)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").glob("*.md")])

# Flags of other programs that the docs quote, and the program.
FOREIGN = {
    "--pyFiles": "flink run",
    "--allowNonRestoredState": "flink run",
    "--drain": "flink stop",
    "--bootstrap-server": "kafka-console-consumer.sh",
    "--from-beginning": "kafka-console-consumer.sh",
    "--isolation-level": "kafka-console-consumer.sh",
    "--property": "kafka-console-consumer.sh",
    "--build": "docker compose up",
    "--from-literal": "kubectl create secret",
    "--native": "py-spy record",
    "--VDM": "NMEA's !--VDM (any talker)",
    "--VDO": "NMEA's !--VDO (any talker)",
}
HIDDEN = {"--test-fail-once"}  # a test-only flag of `ais-pipeline run`, left out of its --help
COMMANDS = [
    ["ais_pipeline.cli"],
    ["ais_pipeline.cli", "run"],
    ["ais_pipeline.cli", "load"],
    ["ais_pipeline.cli", "report"],
    ["ais_pipeline.cli", "replay"],
    ["ais_pipeline.cli", "relay"],
    ["ais_pipeline.tools.plain"],
    ["bench.files"],
    ["bench.make_feed"],
    ["bench.gen_feed"],
    ["bench.state_over_time"],
    ["bench.jvm_options"],
    ["bench.threads"],
    ["bench.world"],
    ["bench.world_feed"],
    ["bench.world_restore"],
    ["bench.encounter_state"],
    ["ais_pipeline.pipeline.jvm_archive"],
]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m) for m in re.findall(r"(?m)^#+ (.*)$", path.read_text())}


def test_every_relative_link_resolves():
    broken = []
    for doc in DOCS:
        text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = (doc.parent / file).resolve() if file else doc
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_is_a_newcomers_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for doc in DOCS:
        text = doc.read_text()
        assert "../shared" not in text and "SPEC.md" not in text, doc.name
        assert not re.search(r"\b(this session|the issue|issue \d+)\b", text, re.I), doc.name


@pytest.fixture(scope="module")
def known_flags() -> set[str]:
    flags = set(HIDDEN)
    for command in COMMANDS:
        done = subprocess.run(
            [sys.executable, "-m", *command, "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
        assert done.returncode == 0, done.stderr[-2000:]
        flags.update(re.findall(r"--[a-zA-Z][a-zA-Z0-9-]*", done.stdout))
    return flags


def test_every_flag_the_docs_name_exists(known_flags: set[str]):
    unknown = []
    for doc in DOCS:
        for flag in sorted(set(re.findall(r"(?<![\w-])--[a-zA-Z][a-zA-Z0-9-]*", doc.read_text()))):
            if flag not in known_flags and flag not in FOREIGN:
                unknown.append(f"{doc.relative_to(ROOT)}: {flag}")
    assert unknown == []
