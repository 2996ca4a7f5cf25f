package ais.flink.feeds;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import org.apache.flink.connector.base.source.reader.RecordsBySplits;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The feed's reader: Flink's fetcher thread polls the {@link Feed} and hands its lines, a batch
 * at a time, to the task through a bounded queue (when the job is slow, the fetcher waits, and a
 * TCP feed stops reading).
 */
final class FeedReader extends SingleThreadMultiplexSourceReaderBase<String, String, FeedSplit, FeedSplit> {
    private static final Logger LOG = LoggerFactory.getLogger(FeedReader.class);

    FeedReader(Supplier<SplitReader<String, FeedSplit>> splitReader, SourceReaderContext context) {
        super(splitReader, (RecordEmitter<String, String, FeedSplit>) FeedReader::emit, new Configuration(), context);
    }

    private static void emit(String line, SourceOutput<String> output, FeedSplit split) {
        output.collect(line);
    }

    @Override
    protected void onSplitFinished(Map<String, FeedSplit> finished) {}

    @Override
    protected FeedSplit initializedState(FeedSplit split) {
        return split;
    }

    @Override
    protected FeedSplit toSplitType(String splitId, FeedSplit state) {
        return state;
    }

    /** Opens the feed when it gets the split; every fetch is what arrived within 100 ms. */
    static final class Fetch implements SplitReader<String, FeedSplit> {
        static final long POLL_MS = 100;
        private final FeedSource source;
        private final FeedCounts counts;
        private Feed feed;

        Fetch(FeedSource source, FeedCounts counts) {
            this.source = source;
            this.counts = counts;
        }

        @Override
        public RecordsWithSplitIds<String> fetch() {
            RecordsBySplits.Builder<String> records = new RecordsBySplits.Builder<>();
            if (feed == null) {
                sleep();
                return records.build();
            }
            try {
                List<String> lines = feed.poll(POLL_MS);
                if (!lines.isEmpty()) {
                    records.addAll(FeedSplit.ID, lines);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LOG.warn("feed {}: {} (going on)", source, e.toString());
                sleep();
            }
            return records.build();
        }

        private static void sleep() {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void handleSplitsChanges(SplitsChange<FeedSplit> change) {
            if (change instanceof SplitsAddition && feed == null && !new ArrayList<>(change.splits()).isEmpty()) {
                try {
                    feed = source.open(counts);
                    LOG.info("feed {}: open", source);
                } catch (Exception e) {
                    throw new IllegalStateException("feed " + source + ": cannot open: " + e, e);
                }
            }
        }

        @Override
        public void wakeUp() {
            if (feed != null) {
                feed.wakeUp();
            }
        }

        @Override
        public void close() throws Exception {
            if (feed != null) {
                feed.close();
                LOG.info("feed {}: closed after {}", source, counts);
            }
        }
    }
}
