"""moto's server (``moto[server]``) as the project's tests and docs run it: Kinesis and DynamoDB on
127.0.0.1, with Kinesis's resharding as Kinesis does it, and faults on demand.

moto (5.x) moves a split shard's records into its children and copies a merged pair's into the
child, goes on putting records into a closed shard, and never ends a closed shard's iterator;
Kinesis keeps a parent's records in the parent, closes it to writes, and returns no next
iterator once a closed shard has been read through. A reader that
finishes a parent before its children (as the job's does) would read a split parent's records
twice on plain moto, and never finish a parent. This server does what Kinesis does.

Faults: with ``MOTO_FAULTS=FILE``, each GetRecords, PutRecords/PutRecord and PutItem call reads the
JSON in FILE (when it is there): ``{"GetRecords": {"throttle": N}, "PutItem": {"throttle": N,
"reject_cell": "u4pruy"}}`` throttles the next N calls (``ProvisionedThroughputExceededException``)
and refuses every PutItem of that cell (``ValidationException``). A test writes the file.

    python scripts/moto_server.py -H 127.0.0.1 -p 5000    # what scripts/moto.sh runs
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

_lock = threading.Lock()


def _fault(operation: str, cell: str = "") -> str:
    """The fault of this call: "throttle", "reject" or ""; a throttle is used up."""
    path = os.environ.get("MOTO_FAULTS", "")
    if not path:
        return ""
    with _lock:
        file = Path(path)
        try:
            faults = json.loads(file.read_text())
        except (OSError, ValueError):
            return ""
        spec = faults.get(operation) or {}
        if spec.get("throttle", 0) > 0:
            spec["throttle"] -= 1
            spec["throttled"] = spec.get("throttled", 0) + 1
            tmp = file.with_suffix(".tmp")
            tmp.write_text(json.dumps(faults))
            tmp.replace(file)
            return "throttle"
        if cell and spec.get("reject_cell") == cell:
            return "reject"
    return ""


def patch() -> None:
    from moto.core.exceptions import JsonRESTError
    from moto.dynamodb.responses import DynamoHandler
    from moto.kinesis import models
    from moto.kinesis.responses import KinesisResponse

    def split_shard(self: Any, shard_to_split: str, new_starting_hash_key: str) -> None:
        shard = self.shards[shard_to_split]
        kept = shard.records
        shard.records = OrderedDict()  # moto re-puts these into the children; Kinesis keeps them
        original(self, shard_to_split, new_starting_hash_key)
        for child in self.shards.values():
            if child.parent == shard.shard_id:
                child.records = OrderedDict()
        shard.records = kept

    def merge_shards(self: Any, shard_to_merge: str, adjacent_shard_to_merge: str) -> None:
        first, second = self.shards[shard_to_merge], self.shards[adjacent_shard_to_merge]
        kept = first.records, second.records
        first.records, second.records = OrderedDict(), OrderedDict()
        merge(self, shard_to_merge, adjacent_shard_to_merge)
        first.records, second.records = kept

    def get_records(self: Any, stream_arn: Any, shard_iterator: str, limit: Any) -> Any:
        from moto.kinesis.utils import decompose_shard_iterator

        stream_name, shard_id, _ = decompose_shard_iterator(shard_iterator)
        next_iterator: str | None
        next_iterator, records, behind = backend_get_records(self, stream_arn, shard_iterator, limit)
        shard = self.describe_stream(stream_arn=stream_arn, stream_name=stream_name).get_shard(shard_id)
        _, _, last = decompose_shard_iterator(str(next_iterator))
        if not shard.is_open and int(last) >= shard.get_max_sequence_number():
            next_iterator = None  # a closed shard read through
        return next_iterator, records, behind

    def get_shard_for_key(self: Any, partition_key: str, explicit_hash_key: str) -> Any:
        shard = shard_for_key(self, partition_key, explicit_hash_key)
        if shard is None or shard.is_open:
            return shard
        key = int(explicit_hash_key) if explicit_hash_key else int(hashlib.md5(partition_key.encode()).hexdigest(), 16)
        return next((s for s in self.shards.values() if s.is_open and s.starting_hash <= key <= s.ending_hash), None)

    shard_for_key = models.Stream.get_shard_for_key
    models.Stream.get_shard_for_key = get_shard_for_key  # type: ignore[method-assign]
    original = models.Stream.split_shard
    merge = models.Stream.merge_shards
    backend_get_records = models.KinesisBackend.get_records
    models.Stream.split_shard = split_shard  # type: ignore[method-assign]
    models.Stream.merge_shards = merge_shards  # type: ignore[method-assign]
    models.KinesisBackend.get_records = get_records  # type: ignore[method-assign]

    kinesis_get_records = KinesisResponse.get_records

    def throttled_get_records(self: Any) -> Any:
        if _fault("GetRecords") == "throttle":
            raise JsonRESTError("ProvisionedThroughputExceededException", "Rate exceeded for shard (injected)")
        return kinesis_get_records(self)

    KinesisResponse.get_records = throttled_get_records  # type: ignore[method-assign]

    dynamo_put_item = DynamoHandler.put_item
    prefix = "com.amazonaws.dynamodb.v20120810#"

    def faulty_put_item(self: Any) -> Any:
        cell = self.body.get("Item", {}).get("cell", {}).get("S", "")
        fault = _fault("PutItem", cell)
        if fault == "throttle":
            raise JsonRESTError(prefix + "ProvisionedThroughputExceededException", "Throughput exceeded (injected)")
        if fault == "reject":
            raise JsonRESTError(prefix + "ValidationException", f"Item of cell {cell} refused (injected)")
        return dynamo_put_item(self)

    DynamoHandler.put_item = faulty_put_item  # type: ignore[method-assign]


def main(argv: list[str]) -> None:
    patch()
    from moto.server import main as serve

    serve(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
