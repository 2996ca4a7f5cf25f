"""Feed a Kinesis data stream from a capture: ``ais-pipeline replay FILE --stream NAME --region R``.

The lines go in their order, each record keyed by its line's receiver (a multipart group's later
fragments by its first's, :class:`ais_pipeline.rules.feeds.PartitionKeys`), a record per
``--lines-per-record`` consecutive lines of one shard. The records of one shard go in one call,
and calls are at least 2 ms apart, so a reader of several shards, which merges them by arrival
time (as the job's Kinesis source does), gets the file's order back. Creates the stream
(``--shards``) when it is missing. Uses boto3 (the project's test extra), with the AWS SDK's
credentials chain; ``--kinesis-endpoint`` for a server of your own (moto: scripts/moto.sh).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from typing import Any

from ais_pipeline.errors import ConfigError
from ais_pipeline.rules.feeds import PartitionKeys

MAX_RECORDS_PER_CALL = 500  # Kinesis's PutRecords limit


def kinesis_client(region: str, endpoint: str) -> Any:
    try:
        import boto3
    except ImportError:
        raise ConfigError('replay --stream: needs boto3 (the package\'s aws extra: pip install ".[aws]")') from None
    return boto3.client("kinesis", region_name=region, endpoint_url=endpoint or None)


def ensure_stream(kinesis: Any, stream: str, shards: int) -> None:
    try:
        kinesis.describe_stream_summary(StreamName=stream)
        return
    except kinesis.exceptions.ResourceNotFoundException:
        pass
    kinesis.create_stream(StreamName=stream, ShardCount=shards)
    kinesis.get_waiter("stream_exists").wait(StreamName=stream)


def open_shards(kinesis: Any, stream: str) -> list[tuple[int, int, str]]:
    shards: list[tuple[int, int, str]] = []
    kwargs: dict[str, Any] = {"StreamName": stream}
    while True:
        page = kinesis.list_shards(**kwargs)
        for s in page["Shards"]:
            if "EndingSequenceNumber" not in s["SequenceNumberRange"]:
                r = s["HashKeyRange"]
                shards.append((int(r["StartingHashKey"]), int(r["EndingHashKey"]), s["ShardId"]))
        if not page.get("NextToken"):
            return shards
        kwargs = {"NextToken": page["NextToken"]}


def shard_of(key: str, shards: list[tuple[int, int, str]]) -> str:
    """The shard Kinesis puts a partition key into: the MD5 of the key as a 128-bit number."""
    h = int(hashlib.md5(key.encode("utf-8"), usedforsecurity=False).hexdigest(), 16)
    return next(shard for start, end, shard in shards if start <= h <= end)


def put_lines(kinesis: Any, stream: str, lines: Iterable[str], lines_per_record: int = 1) -> int:
    """The lines into the stream in their order; returns the records put."""
    shards = open_shards(kinesis, stream)
    keys = PartitionKeys()
    runs: list[tuple[str, list[tuple[str, str]]]] = []  # (shard, [(key, line)])
    for line in lines:
        key = keys.key(line) or "-"  # a partition key is never empty
        shard = shard_of(key, shards)
        if not runs or runs[-1][0] != shard:
            runs.append((shard, []))
        runs[-1][1].append((key, line))
    records = 0
    for _, run in runs:
        batch = []
        for i in range(0, len(run), lines_per_record):
            chunk = run[i : i + lines_per_record]
            batch.append({"Data": "\n".join(line for _, line in chunk).encode(), "PartitionKey": chunk[0][0]})
        for start in range(0, len(batch), MAX_RECORDS_PER_CALL):
            part = batch[start : start + MAX_RECORDS_PER_CALL]
            while part:
                response = kinesis.put_records(StreamName=stream, Records=part)
                failed = [r for r, res in zip(part, response["Records"], strict=True) if "ErrorCode" in res]
                records += len(part) - len(failed)
                if failed:
                    time.sleep(0.2)  # throttled: the rest again, in order (a later call arrives later)
                part = failed
        time.sleep(0.003)
    return records
