"""Single conditional writes against a transaction per batch, as the DynamoDB sink would make them:
``python -m bench.measure_dynamodb --endpoint URL [--items N]`` (moto: scripts/moto.sh).

Writes N aggregate-like items into a fresh table twice, the second time as a replay (every item
stale: the condition fails), once as conditional PutItems (one thread, as one request thread of
the sink) and once as TransactWriteItems of 25 with the same condition, and prints the seconds
of each and what a transaction of a replay does (cancelled as a whole).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

CONDITION = "attribute_not_exists(#cell) OR #count < :count"


def item(i: int) -> dict[str, Any]:
    return {
        "cell": {"S": f"u{i % 97:04d}"},
        "window_start": {"S": f"tumbling#60#60#6#{1668046440 + 60 * (i // 97)}"},
        "count": {"N": "3"},
        "sog_sum": {"N": "30.6"},
        "vessel_hours": {"N": "0.25"},
        "revision": {"N": "0"},
    }


def table(dynamo: Any, name: str) -> None:
    dynamo.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "cell", "KeyType": "HASH"}, {"AttributeName": "window_start", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "cell", "AttributeType": "S"},
            {"AttributeName": "window_start", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def puts(dynamo: Any, name: str, items: list[dict[str, Any]]) -> tuple[float, int]:
    started, stale = time.monotonic(), 0
    for it in items:
        try:
            dynamo.put_item(
                TableName=name,
                Item=it,
                ConditionExpression=CONDITION,
                ExpressionAttributeNames={"#cell": "cell", "#count": "count"},
                ExpressionAttributeValues={":count": it["count"]},
            )
        except dynamo.exceptions.ConditionalCheckFailedException:
            stale += 1
    return time.monotonic() - started, stale


def transactions(dynamo: Any, name: str, items: list[dict[str, Any]]) -> tuple[float, int]:
    started, cancelled = time.monotonic(), 0
    for start in range(0, len(items), 25):
        batch = [
            {
                "Put": {
                    "TableName": name,
                    "Item": it,
                    "ConditionExpression": CONDITION,
                    "ExpressionAttributeNames": {"#cell": "cell", "#count": "count"},
                    "ExpressionAttributeValues": {":count": it["count"]},
                }
            }
            for it in items[start : start + 25]
        ]
        try:
            dynamo.transact_write_items(TransactItems=batch)
        except dynamo.exceptions.TransactionCanceledException:
            cancelled += 1
    return time.monotonic() - started, cancelled


def main(argv: Sequence[str]) -> int:
    import boto3

    parser = argparse.ArgumentParser(prog="bench.measure_dynamodb", description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--items", type=int, default=1000)
    args = parser.parse_args(list(argv))
    dynamo = boto3.client("dynamodb", region_name=args.region, endpoint_url=args.endpoint)
    items = [item(i) for i in range(args.items)]
    stamp = int(time.time())
    table(dynamo, f"measure-puts-{stamp}")
    table(dynamo, f"measure-tx-{stamp}")
    first_puts = puts(dynamo, f"measure-puts-{stamp}", items)
    replay_puts = puts(dynamo, f"measure-puts-{stamp}", items)
    first_tx = transactions(dynamo, f"measure-tx-{stamp}", items)
    replay_tx = transactions(dynamo, f"measure-tx-{stamp}", items)
    batches = -(-args.items // 25)
    print("| writes | first run | replay (every item stale) |")
    print("|---|---|---|")
    print(
        f"| {args.items} conditional PutItems | {first_puts[0]:.1f} s | {replay_puts[0]:.1f} s,"
        f" {replay_puts[1]} conditions failed (done) |"
    )
    print(
        f"| {batches} TransactWriteItems of 25 | {first_tx[0]:.1f} s | {replay_tx[0]:.1f} s,"
        f" {replay_tx[1]} of {batches} transactions cancelled whole |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
