"""A local run's web UI: its port, what the run says about it, and keeping it up once a file run
has ended, until the user is done with it."""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Any, Protocol

from ais_pipeline.config import PipelineConfig, submitted_by_flink_cli
from ais_pipeline.errors import ConfigError
from ais_pipeline.pipeline.ports import bindable, unused_port
from ais_pipeline.pipeline.progress import rest_json

TERMINAL = {"FINISHED", "FAILED", "CANCELED"}
WAITING = "The web UI still shows the finished job at http://localhost:{port}: press Enter (or Ctrl-C) to end."
SHOWN_FOR_S = 15  # the REST API caches a job's page for a few seconds


def keeps_web_ui(config: PipelineConfig) -> bool:
    """A file run on a terminal keeps its web UI up once the job has ended, until the user is done
    with it (not with --no-wait or --follow, and not when stdin or stdout is not a terminal)."""
    if submitted_by_flink_cli() or config.source != "file" or config.no_wait or config.follow or config.input_feed:
        return False
    return sys.stdin.isatty() and sys.stdout.isatty()


def with_free_port(config: PipelineConfig) -> PipelineConfig:
    """The config with a usable web UI port: 0 picks a free one; a taken one is an error."""
    if submitted_by_flink_cli():
        return config
    if config.web_ui_port == 0:
        return dataclasses.replace(config, web_ui_port=unused_port())
    if not bindable(config.web_ui_port):
        raise ConfigError(
            f"--web-ui-port (WEB_UI_PORT): port {config.web_ui_port} is in use; pick another, or 0 for a free one"
        )
    return config


def announce(config: PipelineConfig) -> None:
    """Where the web UI is, for how long, and a warning when it is open to the network."""
    if submitted_by_flink_cli():
        return
    until = "until you end the run" if keeps_web_ui(config) else "while the job runs"
    print(f"Flink web UI: http://localhost:{config.web_ui_port} ({until})", file=sys.stderr)
    if config.open_to_network:
        print(
            f"ais-pipeline: warning: --bind-address {config.bind_address}: the web UI, its REST API (which"
            " takes job submissions) and the Prometheus metrics are open to the network",
            file=sys.stderr,
        )


class Cluster(Protocol):
    """A local cluster that can outlive its job: the mini-cluster kept for the web UI, or the
    TaskManager processes of ``--taskmanagers``."""

    def close(self) -> None: ...


def wait_for_user(cluster: Cluster, port: int) -> None:
    """Keep the local cluster and its web UI up until the user presses Enter or Ctrl-C."""

    def get(path: str) -> Any:
        return rest_json(f"http://127.0.0.1:{port}", path)

    # Say it once the web UI shows the end.
    deadline = time.monotonic() + SHOWN_FOR_S
    while time.monotonic() < deadline:
        try:
            jobs = get("/jobs/overview")["jobs"]
            if jobs and all(get(f"/jobs/{j['jid']}")["state"] in TERMINAL for j in jobs):
                break
        except OSError:
            break
        time.sleep(0.5)
    print(WAITING.format(port=port), flush=True)
    try:
        sys.stdin.readline()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.close()
