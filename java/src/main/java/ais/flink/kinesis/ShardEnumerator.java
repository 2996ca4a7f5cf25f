package ais.flink.kinesis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.annotation.Nullable;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.ListShardsRequest;
import software.amazon.awssdk.services.kinesis.model.ListShardsResponse;
import software.amazon.awssdk.services.kinesis.model.Shard;

/**
 * Finds the stream's shards (on the JobManager) and hands them to the readers: all of them at
 * start, and, when unbounded, the shards that a resharding makes, every discovery interval. A
 * child shard is handed out only once its parents are finished ({@link ShardTracker}). A bounded
 * run reads the shards there are at its start, and tells each reader when there are no more.
 */
final class ShardEnumerator implements SplitEnumerator<ShardSplit, EnumeratorState> {
    private static final Logger LOG = LoggerFactory.getLogger(ShardEnumerator.class);

    private final SplitEnumeratorContext<ShardSplit> context;
    private final KinesisLines settings;
    private final ShardTracker tracker = new ShardTracker();
    private KinesisClient kinesis;
    private boolean discovered;
    private boolean noMoreSignalled;

    ShardEnumerator(SplitEnumeratorContext<ShardSplit> context, KinesisLines settings, @Nullable EnumeratorState state) {
        this.context = context;
        this.settings = settings;
        if (state != null) {
            for (int i = 0; i < state.splits.size(); i++) {
                tracker.restore(state.splits.get(i), state.owners.get(i));
            }
            for (Map.Entry<String, Integer> e : state.finished.entrySet()) {
                tracker.restoreFinished(e.getKey(), e.getValue());
            }
            discovered = state.discovered;
        }
    }

    @Override
    public void start() {
        kinesis = settings.clients.kinesis();
        if (!discovered) {
            // LATEST is the time the run started: a restart before the first checkpoint reads from
            // the same point, and a bounded run stops its shards at that time.
            long startedAt = System.currentTimeMillis();
            String value = settings.start != ShardSplit.Start.AT_TIMESTAMP ? ""
                    : settings.startValue.isEmpty() ? Long.toString(startedAt) : settings.startValue;
            long stopAt = settings.bounded ? startedAt : Long.MAX_VALUE;
            context.callAsync(() -> list(settings.start, value, stopAt), this::onDiscovered);
        }
        if (!settings.bounded) {
            // Shards made by a resharding after the start are read from their oldest record.
            context.callAsync(() -> list(ShardSplit.Start.TRIM_HORIZON, "", Long.MAX_VALUE), this::onDiscovered,
                    settings.discoveryIntervalMs, settings.discoveryIntervalMs);
        }
    }

    private List<ShardSplit> list(ShardSplit.Start start, String value, long stopAt) {
        List<ShardSplit> splits = new ArrayList<>();
        String token = null;
        do {
            ListShardsRequest.Builder request = ListShardsRequest.builder();
            if (token == null) {
                request.streamName(settings.stream);
            } else {
                request.nextToken(token);
            }
            ListShardsResponse response = kinesis.listShards(request.build());
            for (Shard shard : response.shards()) {
                List<String> parents = new ArrayList<>(2);
                if (shard.parentShardId() != null) {
                    parents.add(shard.parentShardId());
                }
                if (shard.adjacentParentShardId() != null) {
                    parents.add(shard.adjacentParentShardId());
                }
                splits.add(new ShardSplit(settings.stream, shard.shardId(), parents, start, value, stopAt, false));
            }
            token = response.nextToken();
        } while (token != null);
        return splits;
    }

    private void onDiscovered(List<ShardSplit> splits, Throwable error) {
        if (error != null) {
            if (!discovered) {
                throw new IllegalStateException("Kinesis stream " + settings.stream + ": cannot list its shards: "
                        + error.getMessage(), error);
            }
            LOG.warn("Kinesis stream {}: listing its shards failed ({}); trying again at the next discovery",
                    settings.stream, error.toString());
            return;
        }
        if (!discovered) {
            LOG.info("Kinesis stream {}: {} shards", settings.stream, splits.size());
        }
        int before = tracker.unfinished().size();
        tracker.discovered(splits);
        if (discovered && tracker.unfinished().size() > before) {
            LOG.info("Kinesis stream {}: new shards found (a resharding)", settings.stream);
        }
        discovered = true;
        assign();
    }

    private void assign() {
        if (!discovered || context.registeredReaders().size() < context.currentParallelism()) {
            return; // every reader first, so that the shards spread over all of them
        }
        Map<Integer, List<ShardSplit>> assignment = tracker.assign(context.currentParallelism());
        if (!assignment.isEmpty()) {
            assignment.forEach((reader, splits) -> LOG.info("Kinesis: reader {} reads {}", reader, splits));
            context.assignSplits(new SplitsAssignment<>(assignment));
        }
        if (settings.bounded && tracker.allAssigned() && !noMoreSignalled) {
            noMoreSignalled = true;
            for (int reader : context.registeredReaders().keySet()) {
                context.signalNoMoreSplits(reader);
            }
        }
    }

    @Override
    public void handleSplitRequest(int subtaskId, @Nullable String requesterHostname) {
        // splits are handed out as they become readable
    }

    @Override
    public void handleSourceEvent(int subtaskId, SourceEvent sourceEvent) {
        if (sourceEvent instanceof ShardsFinished) {
            for (String shardId : ((ShardsFinished) sourceEvent).shardIds) {
                tracker.finished(shardId, subtaskId);
            }
            assign();
        }
    }

    @Override
    public void addSplitsBack(List<ShardSplit> splits, int subtaskId) {
        List<ShardSplit> open = new ArrayList<>();
        for (ShardSplit split : splits) {
            if (split.finished) {
                tracker.finished(split.shardId, subtaskId);
            } else {
                open.add(split);
            }
        }
        tracker.returned(open);
        noMoreSignalled = false;
    }

    @Override
    public void addReader(int subtaskId) {
        if (noMoreSignalled) {
            context.signalNoMoreSplits(subtaskId);
        }
        assign();
    }

    @Override
    public EnumeratorState snapshotState(long checkpointId) {
        List<ShardSplit> splits = tracker.unfinished();
        List<Integer> owners = new ArrayList<>(splits.size());
        for (ShardSplit split : splits) {
            Integer owner = tracker.ownerOf(split.shardId);
            owners.add(owner == null ? -1 : owner);
        }
        return new EnumeratorState(splits, owners, new java.util.LinkedHashMap<>(tracker.finishedShards()), discovered);
    }

    @Override
    public void close() {
        if (kinesis != null) {
            kinesis.close();
        }
    }
}
