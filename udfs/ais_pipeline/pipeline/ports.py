"""A free TCP port that nothing else will be handed meanwhile.

A port found by binding port 0 comes from the kernel's ephemeral range, and once released it can
be handed out again at once: Flink's mini-cluster binds several ephemeral ports of its own
(RPC, blob server, shuffle) before its REST endpoint, and one of them took the web UI's port
in a CI run ("Could not start rest endpoint on any port"). So the port is picked below the
ephemeral range, where the kernel never hands out ports by itself, and checked by binding it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def bindable(port: int) -> bool:
    """True when ``port`` can be bound on localhost now (as Flink binds: TIME_WAIT does not count)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def unused_port() -> int:
    """A port below the ephemeral range that can be bound now."""
    try:
        low = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    first = max(1024, low - 12000)
    for _ in range(200):
        port = random.randint(first, low - 1)
        if bindable(port):
            return port
    raise OSError(f"no free port between {first} and {low - 1}")
