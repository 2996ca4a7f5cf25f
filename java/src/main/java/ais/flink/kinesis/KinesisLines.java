package ais.flink.kinesis;

import ais.flink.aws.AwsClients;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The lines of a Kinesis data stream, on Flink's Source API: a split per shard, its position (a
 * sequence number) in checkpoints, shards found while the job runs (a resharding), and a parent
 * shard read to its end before its children start ({@link ShardTracker}). Each record holds one
 * line or more, split as a file's lines are; bytes that are not UTF-8 are replaced (the job
 * dead-letters such a line as {@code not_text}); a line over 4,096 bytes is cut (dead-lettered
 * too). A reader of several shards emits their records in the order the stream received them
 * ({@link ShardFetcher}). Bounded: each shard stops where it was when the job started.
 *
 * <p>Credentials come from the AWS SDK's default chain ({@link AwsClients}); the source holds
 * the stream's name, region and endpoint only.
 */
public final class KinesisLines implements Source<String, ShardSplit, EnumeratorState> {
    private static final long serialVersionUID = 1L;

    static final long DISCOVERY_INTERVAL_MS = 10_000;

    final AwsClients clients;
    final String stream;
    final ShardSplit.Start start;
    final String startValue;
    final boolean bounded;
    final long discoveryIntervalMs;

    private KinesisLines(AwsClients clients, String stream, ShardSplit.Start start, String startValue, boolean bounded,
            long discoveryIntervalMs) {
        this.clients = clients;
        this.stream = stream;
        this.start = start;
        this.startValue = startValue;
        this.bounded = bounded;
        this.discoveryIntervalMs = discoveryIntervalMs;
    }

    /**
     * The source of one stream. {@code startingPosition}: {@code trim-horizon} (the oldest record
     * kept), {@code latest} (what is written from the job's start on), or
     * {@code at-timestamp:<ISO 8601 or epoch ms>}. {@code endpoint} may be empty (AWS's own).
     */
    public static KinesisLines source(String stream, String region, String endpoint, String startingPosition,
            boolean bounded, long discoveryIntervalMs) {
        if (stream == null || stream.isEmpty()) {
            throw new IllegalArgumentException("Kinesis: a stream name is needed");
        }
        ShardSplit.Start start;
        String value = "";
        if ("trim-horizon".equals(startingPosition)) {
            start = ShardSplit.Start.TRIM_HORIZON;
        } else if ("latest".equals(startingPosition)) {
            start = ShardSplit.Start.AT_TIMESTAMP; // the job's start time, fixed by the enumerator
        } else if (startingPosition.startsWith("at-timestamp:")) {
            start = ShardSplit.Start.AT_TIMESTAMP;
            value = Long.toString(epochMillis(startingPosition.substring("at-timestamp:".length())));
        } else {
            throw new IllegalArgumentException("Kinesis starting position: " + startingPosition);
        }
        return new KinesisLines(new AwsClients(region, endpoint), stream, start, value, bounded,
                discoveryIntervalMs > 0 ? discoveryIntervalMs : DISCOVERY_INTERVAL_MS);
    }

    static long epochMillis(String text) {
        if (text.matches("\\d+")) {
            return Long.parseLong(text);
        }
        try {
            return Instant.parse(text).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("Kinesis starting position: not a time: " + text);
        }
    }

    @Override
    public Boundedness getBoundedness() {
        return bounded ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SourceReader<String, ShardSplit> createReader(SourceReaderContext context) {
        return new KinesisReader(this, context);
    }

    @Override
    public SplitEnumerator<ShardSplit, EnumeratorState> createEnumerator(SplitEnumeratorContext<ShardSplit> context) {
        return new ShardEnumerator(context, this, null);
    }

    @Override
    public SplitEnumerator<ShardSplit, EnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<ShardSplit> context, EnumeratorState state) {
        return new ShardEnumerator(context, this, state);
    }

    @Override
    public SimpleVersionedSerializer<ShardSplit> getSplitSerializer() {
        return new ShardSplit.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<EnumeratorState> getEnumeratorCheckpointSerializer() {
        return new EnumeratorState.Serializer();
    }

    @Override
    public String toString() {
        return "Kinesis " + stream + " (" + clients + ")";
    }
}
