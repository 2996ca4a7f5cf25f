"""Kinesis and DynamoDB on moto's server for the tests: clients, a stream fed in file order, the
aggregates' table read back, and the expected table made from a run's aggregates output."""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from ais_pipeline.rules.outputs import final_aggregates
from ais_pipeline.tools import replay_kinesis

REGION = "us-east-1"


def client(endpoint: str, service: str) -> Any:
    import boto3

    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def create_stream(endpoint: str, stream: str, shards: int) -> None:
    kinesis = client(endpoint, "kinesis")
    kinesis.create_stream(StreamName=stream, ShardCount=shards)
    kinesis.get_waiter("stream_exists").wait(StreamName=stream)


def put_lines(endpoint: str, stream: str, lines: Iterable[str], lines_per_record: int = 1) -> int:
    """The lines into the stream in the file's order (``ais-pipeline replay --stream``'s way)."""
    return replay_kinesis.put_lines(client(endpoint, "kinesis"), stream, lines, lines_per_record)


def table_items(endpoint: str, table: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Every item of the aggregates' table, by (cell, window_start), numbers as Decimals."""
    dynamo = client(endpoint, "dynamodb")
    items: dict[tuple[str, str], dict[str, Any]] = {}
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        page = dynamo.scan(**kwargs)
        for raw in page["Items"]:
            item = {k: _plain(v) for k, v in raw.items()}
            items[(item["cell"], item["window_start"])] = item
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _plain(value: dict[str, Any]) -> Any:
    (kind, inner), *_ = value.items()
    if kind == "N":
        return Decimal(inner)
    if kind == "M":
        return {k: _plain(v) for k, v in inner.items()}
    return inner


def expected_items(aggregates: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The table a run's final aggregates make: the figures the job writes, by key."""
    from datetime import datetime

    out: dict[tuple[str, str], dict[str, Any]] = {}
    for agg in final_aggregates(aggregates).values():
        start = int(datetime.fromisoformat(str(agg["window_start"]).replace("Z", "+00:00")).timestamp())
        key = f"{agg['window']}#{agg['window_seconds']}#{agg['slide_seconds']}#{agg['precision']}#{start}"
        out[(str(agg["cell"]), key)] = figures(agg)
    return out


def figures(agg: dict[str, Any]) -> dict[str, Any]:
    """What a table item and an aggregate must agree on (every figure but the revision)."""
    return {
        "count": Decimal(str(agg["reports"])),
        "vessels": Decimal(str(agg["vessels"])),
        "avg_sog": None if agg.get("avg_sog") is None else Decimal(str(agg["avg_sog"])),
        "sog_sum": Decimal(str(agg["sog_sum"])),
        "vessel_hours": Decimal(str(agg["vessel_hours"])),
        "by_type": {
            name: {k: Decimal(str(v)) for k, v in entry.items()} for name, entry in dict(agg["by_type"]).items()
        },
    }


def item_figures(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "count": item["count"],
        "vessels": item["vessels"],
        "avg_sog": item.get("avg_sog"),
        "sog_sum": item["sog_sum"],
        "vessel_hours": item["vessel_hours"],
        "by_type": item["by_type"],
    }


def write_faults(path: Any, faults: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(faults))
    tmp.replace(path)
