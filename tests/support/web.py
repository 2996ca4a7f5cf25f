"""Reading the web UI's pages as a person's browser would: for secrets that must be on none."""

from __future__ import annotations

import urllib.request

from tests.support.kafka import rest


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
