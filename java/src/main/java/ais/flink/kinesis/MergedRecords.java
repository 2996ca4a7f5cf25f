package ais.flink.kinesis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.annotation.Nullable;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;

/**
 * Records of several shards in the one order the fetcher chose (runs of one shard after another,
 * a shard again later), unlike Flink's {@code RecordsBySplits}, which groups a fetch by split.
 */
final class MergedRecords implements RecordsWithSplitIds<ShardRecord> {
    private final List<String> runShards = new ArrayList<>();
    private final List<List<ShardRecord>> runs = new ArrayList<>();
    private final Set<String> finished = new HashSet<>();
    private int run = -1;
    private int next;

    void add(String shardId, ShardRecord record) {
        int last = runShards.size() - 1;
        if (last < 0 || !runShards.get(last).equals(shardId)) {
            runShards.add(shardId);
            runs.add(new ArrayList<>());
            last++;
        }
        runs.get(last).add(record);
    }

    void finished(String shardId) {
        finished.add(shardId);
    }

    boolean isEmpty() {
        return runs.isEmpty() && finished.isEmpty();
    }

    @Nullable
    @Override
    public String nextSplit() {
        run++;
        next = 0;
        return run < runShards.size() ? runShards.get(run) : null;
    }

    @Nullable
    @Override
    public ShardRecord nextRecordFromSplit() {
        List<ShardRecord> records = runs.get(run);
        return next < records.size() ? records.get(next++) : null;
    }

    @Override
    public Set<String> finishedSplits() {
        return Collections.unmodifiableSet(finished);
    }
}
