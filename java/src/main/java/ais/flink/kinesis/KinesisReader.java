package ais.flink.kinesis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.metrics.Counter;

/**
 * A Kinesis source subtask: its shards read by one {@link ShardFetcher}, each record's lines
 * emitted in order and the shard's position (the record's sequence number) moved past it at
 * once, so a checkpoint falls between records. A shard read to its end is reported to the
 * enumerator (its children may then start) and kept, marked finished, in this reader's
 * checkpoints until two more have completed, so that a restore never loses the report.
 */
final class KinesisReader
        extends SingleThreadMultiplexSourceReaderBase<ShardRecord, String, ShardSplit, KinesisReader.Position> {

    /** A shard's split and the last record emitted from it. */
    static final class Position {
        final ShardSplit split;
        String emitted;

        Position(ShardSplit split) {
            this.split = split;
        }

        ShardSplit toSplit() {
            return emitted == null ? split : split.after(emitted);
        }
    }

    static final class Emitter implements RecordEmitter<ShardRecord, String, Position> {
        private final Counter records;

        Emitter(Counter records) {
            this.records = records;
        }

        @Override
        public void emitRecord(ShardRecord record, SourceOutput<String> output, Position position) {
            for (String line : record.lines) {
                output.collect(line);
            }
            position.emitted = record.sequenceNumber;
            records.inc();
        }
    }

    /** Finished splits by the checkpoint after which they may be forgotten. */
    private final TreeMap<Long, List<ShardSplit>> finished = new TreeMap<>();
    private final List<ShardSplit> finishedSinceSnapshot = new ArrayList<>();

    KinesisReader(KinesisLines settings, SourceReaderContext context) {
        this(settings, context, context.metricGroup().counter("kinesisThrottled"),
                context.metricGroup().counter("kinesisRecords"));
    }

    private KinesisReader(KinesisLines settings, SourceReaderContext context, Counter throttled, Counter records) {
        super(() -> new ShardFetcher(settings.clients.kinesis(), throttled), new Emitter(records),
                new Configuration(), context);
    }

    @Override
    protected void onSplitFinished(Map<String, Position> done) {
        List<String> ids = new ArrayList<>(done.keySet());
        for (Position position : done.values()) {
            finishedSinceSnapshot.add(position.toSplit().asFinished());
        }
        context.sendSourceEventToCoordinator(new ShardsFinished(ids));
    }

    @Override
    public void addSplits(List<ShardSplit> splits) {
        List<ShardSplit> open = new ArrayList<>();
        List<String> done = new ArrayList<>();
        for (ShardSplit split : splits) {
            if (split.finished) {
                done.add(split.shardId); // restored: say so again (the enumerator may not have heard)
                finishedSinceSnapshot.add(split);
            } else {
                open.add(split);
            }
        }
        if (!done.isEmpty()) {
            context.sendSourceEventToCoordinator(new ShardsFinished(done));
        }
        super.addSplits(open);
    }

    @Override
    public List<ShardSplit> snapshotState(long checkpointId) {
        List<ShardSplit> state = new ArrayList<>(super.snapshotState(checkpointId));
        if (!finishedSinceSnapshot.isEmpty()) {
            // kept until checkpoint id + 2 has completed: by then the enumerator's own checkpoint
            // (taken before each one of the readers') holds the report
            finished.computeIfAbsent(checkpointId + 2, k -> new ArrayList<>()).addAll(finishedSinceSnapshot);
            finishedSinceSnapshot.clear();
        }
        for (List<ShardSplit> splits : finished.values()) {
            state.addAll(splits);
        }
        return state;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        finished.headMap(checkpointId, true).clear();
    }

    @Override
    protected Position initializedState(ShardSplit split) {
        return new Position(split);
    }

    @Override
    protected ShardSplit toSplitType(String splitId, Position position) {
        return position.toSplit();
    }
}
