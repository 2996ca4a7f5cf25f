package ais.flink.feeds;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The one split of a live feed: the feed itself. It has no position (a network feed cannot be
 * read again), so a restored source listens or connects again and reads what comes from then on.
 */
public final class FeedSplit implements SourceSplit {
    static final String ID = "feed";

    @Override
    public String splitId() {
        return ID;
    }

    /** Splits (always the one) and the enumerator's state (whether it was assigned) in checkpoints. */
    static final class Serializer implements SimpleVersionedSerializer<FeedSplit> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(FeedSplit split) {
            return ID.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public FeedSplit deserialize(int version, byte[] serialized) throws IOException {
            if (version != 1) {
                throw new IOException("feed split of unknown version " + version);
            }
            return new FeedSplit();
        }
    }

    static final class StateSerializer implements SimpleVersionedSerializer<Boolean> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Boolean assigned) {
            return new byte[] {(byte) (assigned ? 1 : 0)};
        }

        @Override
        public Boolean deserialize(int version, byte[] serialized) {
            return serialized.length > 0 && serialized[0] == 1;
        }
    }
}
