"""Where a run's PostgreSQL outputs go: a ``postgresql://`` URL as the job takes it (``--postgres``),
and the password beside it. Plain Python, no database client: the config is built from it, and the
database itself is :mod:`ais_pipeline.postgres`'s.

The password is never in a repr, and errors name the server without it.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ais_pipeline.errors import UserError


class PostgresError(UserError):
    """The database cannot take the job's outputs; the message is one line, without the password."""


@dataclass(frozen=True)
class Target:
    """A PostgreSQL database and how to log in; the password is never in the repr."""

    host: str
    port: int
    database: str
    user: str
    password: str = field(default="", repr=False)
    sslmode: str = ""
    password_in_url: bool = field(default=False, repr=False, compare=False)

    def shown(self) -> str:
        """The URL without the password, for messages."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    def jdbc_url(self) -> str:
        """The JDBC URL (user and password go separately, so the URL can be shown)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = f"?sslmode={urllib.parse.quote(self.sslmode)}" if self.sslmode else ""
        return f"jdbc:postgresql://{host}:{self.port}/{urllib.parse.quote(self.database)}{query}"


def parse_url(url: str, password_file: str = "", environ: Mapping[str, str] | None = None) -> Target:
    """``postgresql://user[:password]@host[:port]/database[?sslmode=...]``. The password is the
    URL's, else the first line of ``password_file``, else ``PGPASSWORD``."""
    env = os.environ if environ is None else environ
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise PostgresError("expected postgresql://user:password@host:port/database")
    try:
        port = parts.port or 5432
    except ValueError:
        raise PostgresError("the port is not a number") from None
    database = urllib.parse.unquote(parts.path.lstrip("/"))
    if not parts.hostname or not database or not parts.username:
        raise PostgresError("expected postgresql://user:password@host:port/database (user, host and database)")
    query = urllib.parse.parse_qs(parts.query)
    unknown = sorted(set(query) - {"sslmode"})
    if unknown:
        raise PostgresError(f"unknown URL parameter {unknown[0]!r} (only sslmode)")
    password = urllib.parse.unquote(parts.password) if parts.password else ""
    if not password and password_file:
        path = Path(password_file)
        if not path.is_file():
            raise PostgresError(f"no such password file: {path}")
        text = path.read_text(encoding="utf-8")
        password = text.splitlines()[0] if text.strip() else ""
    if not password:
        password = env.get("PGPASSWORD", "")
    return Target(
        host=parts.hostname,
        port=port,
        database=database,
        user=urllib.parse.unquote(parts.username),
        password=password,
        sslmode=query.get("sslmode", [""])[0],
        password_in_url=bool(parts.password),
    )
