package ais.flink.dynamodb;

import ais.flink.aws.AwsClients;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.base.sink.AsyncSinkBase;
import org.apache.flink.connector.base.sink.writer.AsyncSinkWriterStateSerializer;
import org.apache.flink.connector.base.sink.writer.BufferedRequestState;
import org.apache.flink.connector.base.sink.writer.ElementConverter;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The aggregates into a DynamoDB table, on Flink's {@link AsyncSinkBase}: entries buffered and
 * sent in batches, in flight concurrently, buffered entries in checkpoints (at least once), each
 * one a conditional {@code PutItem} that replaces an item only with a newer firing of its window
 * ({@link AggregateItems}), so the table ends as if every aggregate came once.
 * {@code BatchWriteItem} cannot carry a condition; a transaction per small batch
 * ({@code TransactWriteItems}) fails as a whole when one item is stale, which a replay makes
 * the common case, and costs twice the write units: single conditional writes it is.
 *
 * <p>A throttled or failed request is retried: the SDK backs off within a request, the writer
 * between rounds, up to {@code maxRounds}. What fails for good (throttled through every round, or
 * refused, such as a {@code ValidationException}) becomes a {@code dynamodb_rejected} dead
 * letter holding the aggregate's line, appended to a JSON Lines file of the writer's own in the
 * folder of the run's dead-letter output (a sink cannot feed another operator of the job, and
 * Flink's post-commit topologies emit after a bounded job's inputs have ended). A missing table,
 * refused credentials or access fail the job (its restart writes again what the checkpoint had
 * not confirmed).
 */
public final class DynamoDbAggregates extends AsyncSinkBase<String, AggregateWrite> {
    private static final long serialVersionUID = 1L;

    /** One request: up to this many items, written concurrently. */
    static final int BATCH = 25;

    final AwsClients clients;
    final String table;
    final int maxRounds;
    final int sdkAttempts;
    /** Where dead letters go (a folder of the run's dead-letter output), or "" (logged only). */
    final String deadLetterDir;
    /** The window kinds written (the {@code window} field of an aggregate); the others are skipped. */
    final Set<String> windows;

    private DynamoDbAggregates(AwsClients clients, String table, int maxInFlight, int maxRounds, long maxDelayMs,
            String deadLetterDir, Set<String> windows) {
        super((ElementConverter<String, AggregateWrite>) (json, context) -> new AggregateWrite(json, 0),
                BATCH, maxInFlight, 10_000, 4L * 1024 * 1024, maxDelayMs, 400L * 1024);
        this.clients = clients;
        this.table = table;
        this.maxRounds = maxRounds;
        this.sdkAttempts = 3;
        this.deadLetterDir = deadLetterDir == null ? "" : deadLetterDir;
        this.windows = windows;
    }

    /**
     * The sink of the aggregates' JSON lines into {@code table}. {@code maxInFlight}: requests of
     * up to {@value #BATCH} items at once; {@code maxRounds}: how often an item is sent again
     * after throttling before it is dead-lettered; {@code maxDelayMs}: how long an item waits for
     * a batch to fill; {@code deadLetterDir}: the folder of the run's dead-letter output (JSON
     * Lines files), or "" to log and count them only; {@code windows}: the window kinds written,
     * comma-separated ({@code tumbling}, {@code sliding}), the aggregates of other kinds skipped.
     */
    public static DynamoDbAggregates sink(String region, String endpoint, String table, int maxInFlight,
            int maxRounds, long maxDelayMs, String deadLetterDir, String windows) {
        return new DynamoDbAggregates(new AwsClients(region, endpoint), table, maxInFlight, maxRounds, maxDelayMs,
                deadLetterDir, new HashSet<>(Arrays.asList(windows.split(","))));
    }

    @Override
    public StatefulSinkWriter<String, BufferedRequestState<AggregateWrite>> createWriter(WriterInitContext context) {
        return new DynamoDbWriter(this, context, Collections.emptyList());
    }

    @Override
    public StatefulSinkWriter<String, BufferedRequestState<AggregateWrite>> restoreWriter(
            WriterInitContext context, Collection<BufferedRequestState<AggregateWrite>> recoveredState) {
        return new DynamoDbWriter(this, context, recoveredState);
    }

    @Override
    public SimpleVersionedSerializer<BufferedRequestState<AggregateWrite>> getWriterStateSerializer() {
        return new StateSerializer();
    }

    ElementConverter<String, AggregateWrite> converter() {
        return getElementConverter();
    }

    int maxBatchSize() {
        return getMaxBatchSize();
    }

    int maxInFlight() {
        return getMaxInFlightRequests();
    }

    int maxBuffered() {
        return getMaxBufferedRequests();
    }

    long maxBatchBytes() {
        return getMaxBatchSizeInBytes();
    }

    long maxDelayMs() {
        return getMaxTimeInBufferMS();
    }

    long maxRecordBytes() {
        return getMaxRecordSizeInBytes();
    }

    /** Buffered entries in checkpoints: the JSON line and the failed rounds. */
    static final class StateSerializer extends AsyncSinkWriterStateSerializer<AggregateWrite> {
        @Override
        protected void serializeRequestToStream(AggregateWrite request, DataOutputStream out) throws IOException {
            byte[] json = request.json.getBytes(StandardCharsets.UTF_8);
            out.writeInt(json.length);
            out.write(json);
            out.writeInt(request.failures);
        }

        @Override
        protected AggregateWrite deserializeRequestFromStream(long requestSize, DataInputStream in)
                throws IOException {
            byte[] json = new byte[in.readInt()];
            in.readFully(json);
            return new AggregateWrite(new String(json, StandardCharsets.UTF_8), in.readInt());
        }

        @Override
        public int getVersion() {
            return 1;
        }
    }
}
