package ais.flink.feeds;

import java.util.List;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/** Gives the feed's one split to reader 0 (the source runs at parallelism 1), again after a failover. */
final class FeedEnumerator implements SplitEnumerator<FeedSplit, Boolean> {
    private final SplitEnumeratorContext<FeedSplit> context;
    private boolean assigned;

    FeedEnumerator(SplitEnumeratorContext<FeedSplit> context, boolean assigned) {
        this.context = context;
        this.assigned = assigned;
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {}

    @Override
    public void addSplitsBack(List<FeedSplit> splits, int subtaskId) {
        assigned = false; // the reader failed: its restored state had the split, or it gets it again
        addReader(subtaskId);
    }

    @Override
    public void addReader(int subtaskId) {
        if (!assigned && subtaskId == 0 && context.registeredReaders().containsKey(0)) {
            context.assignSplit(new FeedSplit(), 0);
            assigned = true;
        }
    }

    @Override
    public Boolean snapshotState(long checkpointId) {
        return assigned;
    }

    @Override
    public void close() {}
}
