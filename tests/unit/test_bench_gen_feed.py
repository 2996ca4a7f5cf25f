"""The benchmark feed generator: a fleet and receivers of the size asked for, and the same feed for
the same seed (the benchmark's feeds are compared across commits)."""

from __future__ import annotations

import hashlib
import re

import pyais
import pytest

from bench.gen_feed import generate

pytestmark = pytest.mark.unit

# sha256 of generate(20_000, 3): the feed the tables of docs/performance.md were measured on
DEFAULT_20K_SEED_3 = "5264f16aa0eeeccaf8f13c69abcb6b0c65b11266e5586ea260cb0035b24c9722"


def test_a_feed_of_many_vessels_and_few_receivers_has_them():
    lines = generate(6_000, 1, vessels=2_000, receivers=2)
    mmsis = set()
    for line in lines:
        found = re.search(r"s:(\w+)", line)
        assert found is not None and found.group(1) in {"shore1", "shore2", "sat1"}
    for line in lines:
        try:
            msg = pyais.decode(line.split("\\")[-1]).asdict()
        except Exception:  # a part of a multipart message, or a damaged line
            continue
        mmsis.add(msg["mmsi"])
    assert 1_500 < len(mmsis) <= 2_000  # a few lines per vessel: the whole fleet is heard


def test_the_default_feed_is_the_one_the_benchmarks_measured():
    digest = hashlib.sha256("\n".join(generate(20_000, 3)).encode()).hexdigest()
    assert digest == DEFAULT_20K_SEED_3
