"""Reading the web UI's pages as a person's browser would: for secrets that must be on none, and
for what a running job of the bundled sample shows (its watermark, its dedup counters)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from tests.support.jobs import RUNNING_KEPT
from tests.support.kafka import rest

# The sample's receivers' watermark ends at 02:14:43.999 (the newest report of the slowest current
# receiver, 02:14:54, minus 10 s, minus 1 ms); the job's watermark moves in steps of a minute (the
# pane; see ais.flink.ReceiverWatermarks), so it shows 02:13:59.999.
EXPECTED_WATERMARK = 1668046439999
# Positions judged while the watermark stands where the sample leaves it (02:13:59.999): the others
# wait in their vessels' state until it passes them (a drain, or later lines).
EXPECTED_KEPT = RUNNING_KEPT
EXPECTED_DUPLICATES = 881


def get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read().decode(errors="replace")  # type: ignore[no-any-return]


def assert_on_no_page(cluster: str, job: str, secret: str) -> None:
    """``secret`` is on no page of the web UI about the running ``job``: its config and plan, the
    JobManager's config, environment and log, every TaskManager's log and stdout."""
    pages = [
        f"/jobs/{job}",
        f"/jobs/{job}/config",
        f"/jobs/{job}/plan",
        f"/jobs/{job}/jobmanager/config",
        f"/jobs/{job}/jobmanager/environment",
        "/jobmanager/config",
        "/jobmanager/environment",
        "/jobmanager/log",
    ]
    for tm in rest(cluster, "/taskmanagers")["taskmanagers"]:
        pages += [f"/taskmanagers/{tm['id']}/log", f"/taskmanagers/{tm['id']}/stdout"]
    seen = {}
    for page in pages:
        seen[page] = get_text(cluster + page)
        assert secret not in seen[page], page
    assert len(seen[f"/jobs/{job}/config"]) > 100


def settled(web: dict[str, object]) -> bool:
    vertices = web.get("vertices")
    assert isinstance(vertices, dict)
    windows = [v for name, v in vertices.items() if name.startswith("cell windows")]
    dedup = [v for name, v in vertices.items() if name.startswith("dedup by MMSI")]
    return (
        bool(windows and dedup)
        and windows[0]["watermark"] == EXPECTED_WATERMARK
        and dedup[0].get("positions_kept") == EXPECTED_KEPT
        and dedup[0].get("duplicates_exact") == EXPECTED_DUPLICATES
    )


def web_ui_view(port: int) -> dict[str, object]:
    """Job state, and per vertex its lowest input watermark and summed dedup counters."""

    def get(path: str) -> object:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return json.load(resp)

    (job,) = get("/jobs/overview")["jobs"]  # type: ignore[index]
    detail = get(f"/jobs/{job['jid']}")
    vertices: dict[str, dict[str, int]] = {}
    for vertex in detail["vertices"]:  # type: ignore[index]
        base = f"/jobs/{job['jid']}/vertices/{vertex['id']}"
        marks = get(f"{base}/watermarks")
        view = {"watermark": min((int(m["value"]) for m in marks), default=-(2**63))}  # type: ignore[union-attr]
        if vertex["name"].startswith("dedup by MMSI"):
            for metric in ("duplicates_exact", "positions_kept"):
                ids = ",".join(f"{i}.dedup_by_MMSI.{metric}" for i in range(vertex["parallelism"]))
                values = get(f"{base}/metrics?get={ids}")
                view[metric] = sum(int(v["value"]) for v in values)  # type: ignore[union-attr]
        vertices[vertex["name"]] = view
    return {"state": job["state"], "vertices": vertices}


class DevTools:
    """Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
    commands in on descriptor 3, replies out on 4, each JSON and a NUL), to do what a person does
    on a page: type into a field, pick from a list, press a button, and read what it then shows."""

    def __init__(self, binary: str, window: str = "1400,1000") -> None:
        import os
        import subprocess

        commands_r, commands_w = os.pipe()
        replies_r, replies_w = os.pipe()

        def descriptors() -> None:  # in the child: the pipe ends as descriptors 3 and 4, inherited
            a, b = os.dup(commands_r), os.dup(replies_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        flags += ["--disable-component-update", f"--window-size={window}", "--remote-debugging-pipe"]
        self.proc = subprocess.Popen(
            [binary, *flags, "about:blank"],
            preexec_fn=descriptors,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_r)
        os.close(replies_w)
        self._out, self._in = commands_w, replies_r
        self._id = 0
        self._buffer = b""
        self.session = ""

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *exc: object) -> None:
        import os

        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._out)
        os.close(self._in)

    def send(self, method: str, params: dict[str, object] | None = None, session: bool = True) -> dict[str, Any]:
        import os
        import select

        self._id += 1
        message: dict[str, object] = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                ready, _, _ = select.select([self._in], [], [], 60)
                chunk = os.read(self._in, 1 << 16) if ready else b""
                if not chunk:
                    raise RuntimeError(f"chromium gave no answer to {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": url}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)[
            "sessionId"
        ]

    def run(self, script: str) -> Any:
        """A script's value on the page (a function body: ``return`` gives the value)."""
        expression = f"(() => {{ {script} }})()"
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})["result"]
        return result.get("value")

    def until(self, script: str, timeout_s: float = 30) -> Any:
        """A script's value once it is truthy."""
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = self.run(script)
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"the page never showed: {script}")

    def screenshot(self, path: str) -> None:
        import base64

        with open(path, "wb") as fh:
            fh.write(base64.b64decode(self.send("Page.captureScreenshot")["data"]))


def gauges_in_web_ui(browser: DevTools, page: str, names: list[str]) -> dict[str, str]:
    """On the Metrics tab of an operator of the web UI (``page``), each metric of ``names`` added
    as a person adds it (its name typed into "Add Metric", picked from the list), shown as a
    number: what each card shows."""
    browser.open(page)
    browser.until("return document.querySelector('nz-select .ant-select-selector') !== null")
    for name in names:
        browser.run(
            "const s = document.querySelector('nz-select .ant-select-selector');"
            " s.dispatchEvent(new MouseEvent('mousedown', {bubbles: true})); s.click(); return 1;"
        )
        browser.run(
            "const i = document.querySelector('nz-select input');"
            f" i.value = {json.dumps(name)}; i.dispatchEvent(new Event('input', {{bubbles: true}})); return 1;"
        )
        browser.until(
            "const o = Array.from(document.querySelectorAll('nz-option-item'))"
            f".find(e => e.innerText.trim() === {json.dumps(name)}); if (o) {{ o.click(); return 1; }} return 0;"
        )
        browser.until(
            "return Array.from(document.querySelectorAll('flink-job-chart .title .text'))"
            f".some(e => e.getAttribute('title') === {json.dumps(name)});"
        )
    browser.run(
        "for (const b of document.querySelectorAll('flink-job-chart label, flink-job-chart button'))"
        " { if (b.innerText.trim() === 'Numeric') { b.click(); } } return 1;"
    )
    return browser.until(  # type: ignore[no-any-return]
        "const shown = {}; for (const c of document.querySelectorAll('flink-job-chart')) {"
        " const t = c.querySelector('.title .text').getAttribute('title');"
        " const n = c.innerText.split('\\n').map(s => s.trim()).find(s => /^-?[0-9.]+( ?[0-9.]*(ms|s|m|h))*$/.test(s));"
        " if (n === undefined) { return null; } shown[t] = n; }"
        f" return Object.keys(shown).length === {len(names)} ? shown : null;"
    )


def shown_ms(text: str) -> int:
    """A duration as the web UI shows a ``..._ms`` metric (``512ms``, ``1s 20ms``, ``-1``), in ms."""
    import re

    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
    parts = re.findall(r"(-?[0-9.]+)\s*(ms|s|m|h)?", text)
    return round(sum(float(n) * units[u or "ms"] for n, u in parts))
