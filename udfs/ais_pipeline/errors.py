"""The one base of the errors a user can fix, and the one place they are printed.

Every such error says what is wrong in one line, naming the flag, file or server concerned: a bad
flag, a missing topic, a database that refuses the login, a job that failed. The commands run
under :func:`guarded`, which prints ``ais-pipeline: error: <message>`` and exits 2; anything else
is a defect and keeps its stack trace.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


class UserError(Exception):
    """Something the user can fix; the message is one line."""


class ConfigError(UserError, ValueError):
    """A flag or environment variable has a value the job cannot run with."""


class JobFailed(UserError):
    """The job failed while it ran; the message is the innermost cause, in one line."""


class Cancelled(KeyboardInterrupt):
    """The user stopped the run and its job was cancelled before it drained (a second Ctrl-C, or a
    drain that failed): what it wrote is partial, and it has no summary."""


class StoppedBeforeStart(KeyboardInterrupt):
    """The user stopped the run (Ctrl-C, SIGTERM, SIGHUP) while its cluster was starting: no job
    ran, and nothing of it is left behind."""


def guarded(command: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    """Run one command of the CLI: a :class:`UserError` is printed in one line (exit 2), a
    Ctrl-C that reached this far ends quietly (exit 130)."""
    try:
        return command(argv)
    except UserError as exc:
        print(f"ais-pipeline: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ais-pipeline: stopped", file=sys.stderr)
        return 130
