package ais.flink.kinesis;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.connector.source.SourceEvent;

/** A reader to the enumerator: these shards are read to their end (their children may start). */
final class ShardsFinished implements SourceEvent {
    private static final long serialVersionUID = 1L;

    final List<String> shardIds;

    ShardsFinished(List<String> shardIds) {
        this.shardIds = new ArrayList<>(shardIds);
    }
}
