"""The project's own PostgreSQL server (scripts/postgres.sh), the one the PostgreSQL outputs will
be written to: installed when missing, on a scratch directory and a free port, listening on
loopback only, taking the password of its one user and refusing any other."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ais_pipeline.pipeline.ports import unused_port
from tests.support.servers import ROOT

pytestmark = pytest.mark.integration

SCRIPT = ROOT / "scripts" / "postgres.sh"


def psql(port: int, password: str, sql: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PGPASSWORD=password)
    cmd = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "ais", "-d", "ais", "-tAc", sql]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=30)


@pytest.fixture
def pg_dir() -> Iterator[Path]:
    """A scratch directory under build/ (pytest's own are private to root, and the server runs as
    the user postgres when the tests run as root)."""
    path = ROOT / "build" / f"test-postgres-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_server_listens_on_loopback_and_takes_only_its_password(pg_dir: Path):
    port = unused_port()
    env = dict(os.environ, PG_DIR=str(pg_dir), PG_PORT=str(port))
    started = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, env=env, timeout=600)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        password = (pg_dir / "password").read_text()
        assert started.stdout.strip().splitlines()[-1] == (
            f"postgres up: postgresql://ais@127.0.0.1:{port}/ais (password in {pg_dir / 'password'})"
        )
        assert password not in started.stdout + started.stderr
        assert oct((pg_dir / "password").stat().st_mode & 0o777) == "0o600"
        listening = {
            c.laddr.ip
            for c in psutil.net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port
        }
        assert listening == {"127.0.0.1"}
        assert psql(port, password, "SELECT current_user, current_database()").stdout.strip() == "ais|ais"
        refused = psql(port, "wrong", "SELECT 1")
        assert refused.returncode != 0 and 'password authentication failed for user "ais"' in refused.stderr
        # A second start finds it running; stop and start keep the data and the password.
        again = subprocess.run(["bash", str(SCRIPT), "start"], capture_output=True, text=True, env=env, timeout=60)
        assert again.stdout.strip() == f"postgres already running on 127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, env=env, timeout=60)
    status = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True, text=True, env=env, timeout=60)
    assert (status.returncode, status.stdout.strip()) == (1, "not running")
