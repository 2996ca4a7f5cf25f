"""Reading the web UI's pages as a person's browser would: for secrets that must be on none, and
for what a running job of the bundled sample shows (its watermark, its dedup counters)."""

from __future__ import annotations

import json
import urllib.request

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
