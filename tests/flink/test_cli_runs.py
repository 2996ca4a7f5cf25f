"""What a user sees of `ais-pipeline run`: an empty input ends in an empty but valid summary, a run
without --output prints a sample of each output (every record behind --print-all), the libraries'
start-up chatter stays out of the terminal, and a failing run ends at once with its cause."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.jobs import ROOT

pytestmark = pytest.mark.flink

NOISE = ("Using Any for unsupported type", "bigquery_storage_v1", "PYFLINK_CYTHON_ENABLED")


def cli_run(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--web-ui-port", "0", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_an_empty_input_ends_with_an_empty_valid_summary_in_a_new_output_folder(kind: str, tmp_path: Path):
    empty = tmp_path / "empty"
    if kind == "file":
        empty.write_text("")
    else:
        empty.mkdir()
    out = tmp_path / "not" / "there" / "yet"
    proc = cli_run("--input", str(empty), "--output", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["lines"], summary["accounted_lines"], summary["positions_kept"]) == (0, 0, 0)
    assert summary["dead_letter"] == {} and summary["per_minute"] == {}
    assert "lines read          0" in proc.stdout
    assert "lines accounted for 0 of 0" in proc.stdout
    report = subprocess.run(
        [sys.executable, "-m", "ais_pipeline.cli", "report", str(out)], cwd=ROOT, capture_output=True, text=True
    )
    # Nothing to draw: one line that says so, not a stack trace.
    assert (report.returncode, report.stderr) == (
        2,
        f"ais-pipeline: error: report: {out / 'aggregates'} has no tumbling aggregates\n",
    )


def test_a_run_without_output_prints_a_sample_of_each_output_and_every_record_on_request(fixtures: Path):
    capture = fixtures / "risky__nmea-timestamped.txt"  # 88 positions kept
    proc = cli_run("--input", str(capture))
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [line for line in proc.stdout.splitlines() if "> " in line and line.split("> ")[0].isidentifier()]
    by_output: dict[str, list[str]] = {}
    for line in records:
        name, _, record = line.partition("> ")
        by_output.setdefault(name, []).append(record)
    assert max(len(v) for v in by_output.values()) <= 4  # three records and "... N more"
    assert any(v[-1].startswith("... ") and v[-1].endswith(" more") for v in by_output.values())
    assert "(--output DIR writes every record; --print-all prints them)" in proc.stdout
    for noise in NOISE:
        assert noise not in proc.stderr + proc.stdout

    everything = cli_run("--input", str(capture), "--print-all")
    assert everything.returncode == 0, everything.stderr[-3000:]
    kept = int(next(line.split()[-1] for line in everything.stdout.splitlines() if line.startswith("positions kept")))
    printed = [line for line in everything.stdout.splitlines() if line.startswith("positions> {")]
    assert kept == 88 and len(printed) == kept
    assert all("mmsi" in json.loads(line.partition("> ")[2]) for line in printed)


def run_on_a_terminal(
    cmd: list[str], timeout_s: float = 120, prompt: str = "", answer: Callable[[str], str] | None = None
) -> tuple[int, str]:
    """Run ``cmd`` on a pseudo-terminal of 120 x 30 and return its exit status and all it wrote;
    once it has written ``prompt``, type what ``answer`` returns (given the output so far)."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the terminal
        os.chdir(ROOT)
        os.execv(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    out = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if answer is not None and prompt and prompt in out.decode(errors="replace"):
                os.write(fd, answer(out.decode(errors="replace")).encode())
                answer = None
    else:  # still running at the deadline: end it (the test then fails on its status)
        os.killpg(pid, 9)  # the child leads its own session: its JVM goes too
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_on_a_terminal_a_run_shows_one_refreshing_progress_line(tmp_path: Path):
    from ais_pipeline.config import SAMPLE_INPUT

    cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--input", str(SAMPLE_INPUT)]
    code, text = run_on_a_terminal([*cmd, "--output", str(tmp_path / "out"), "--web-ui-port", "0", "--no-wait"])
    assert code == 0, text[-3000:]
    # tqdm redraws the line after a \r: a bar over the input's bytes, the figures beside it.
    frames = [f for f in text.split("\r") if "/687k [" in f]  # the sample is 687,120 bytes
    assert frames, text[-3000:]
    # The first frame is drawn before any figure is read; the later ones carry them.
    assert all("lines/s" in f and "watermark" in f and " kept " in f for f in frames[1:]) and len(frames) > 1, frames
    assert "lines accounted for 10000 of 10000" in text


def test_on_a_terminal_the_web_ui_shows_the_finished_job_until_enter(tmp_path: Path):
    from ais_pipeline.config import SAMPLE_INPUT
    from ais_pipeline.pipeline.ports import unused_port

    port = unused_port()
    seen: dict[str, object] = {}

    def look_then_press_enter(_: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/overview", timeout=10) as resp:
            (job,) = json.load(resp)["jobs"]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/{job['jid']}", timeout=10) as resp:
            seen["job"] = json.load(resp)
        return "\n"

    cmd = [sys.executable, "-m", "ais_pipeline.cli", "run", "--input", str(SAMPLE_INPUT), "--web-ui-port", str(port)]
    prompt = f"The web UI still shows the finished job at http://localhost:{port}: press Enter (or Ctrl-C) to end."
    code, text = run_on_a_terminal(
        [*cmd, "--output", str(tmp_path / "out")], prompt=prompt, answer=look_then_press_enter
    )
    assert code == 0, text[-3000:]
    job = seen["job"]
    assert isinstance(job, dict) and job["state"] == "FINISHED"
    names = [v["name"] for v in job["vertices"]]
    assert any("dedup by MMSI" in n for n in names) and any("cell windows" in n for n in names)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["positions_kept"] == 7294
    # Enter ended it: the web UI is gone.
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/jobs/overview", timeout=5)

    # --no-wait ends at once, on a terminal too.
    code, text = run_on_a_terminal([*cmd, "--output", str(tmp_path / "again"), "--no-wait"])
    assert code == 0 and "press Enter" not in text, text[-3000:]


def test_a_failing_local_run_ends_at_once_with_its_cause_in_one_line(tmp_path: Path):
    # The operator throws once (test-only flag): a run that restarted the job would then succeed.
    marker = tmp_path / "thrown"
    proc = cli_run("--no-wait", "--output", str(tmp_path / "out"), "--test-fail-once", f"{marker}=AIVDM")
    assert marker.exists()
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ais-pipeline: error:")]
    assert errors == [
        "ais-pipeline: error: the job failed: RuntimeError: injected failure on a line containing 'AIVDM'"
        " (--test-fail-once)"
    ]
    assert "Traceback" not in proc.stderr and "lines read" not in proc.stdout
