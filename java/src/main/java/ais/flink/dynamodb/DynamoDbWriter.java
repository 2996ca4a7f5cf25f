package ais.flink.dynamodb;

import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.base.sink.writer.AsyncSinkWriter;
import org.apache.flink.connector.base.sink.writer.BufferedRequestState;
import org.apache.flink.connector.base.sink.writer.ResultHandler;
import org.apache.flink.connector.base.sink.writer.config.AsyncSinkWriterConfiguration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * The writer of {@link DynamoDbAggregates}: each batch's items written concurrently by
 * conditional {@code PutItem}s on request threads of its own; a stale firing (the condition
 * fails) is a success. Throttling, server errors and lost connections: the item is sent again in
 * a later round, after a pause that doubles; after {@code maxRounds}, and at once for a refusal
 * of the item itself, it becomes a dead letter. Refusals of the table or the credentials fail
 * the job.
 */
final class DynamoDbWriter extends AsyncSinkWriter<String, AggregateWrite> {
    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbWriter.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String REASON = "dynamodb_rejected";

    private final String table;
    private final int maxRounds;
    private final DynamoDbClient dynamo;
    /** Request threads; an item's writes all go to the one its key picks, in the order they came. */
    private final ExecutorService[] requests;
    private final String deadLetterDir;
    private final int subtask;
    private Writer deadLetters;
    private final Counter written;
    private final Counter stale;
    private final Counter throttled;
    private final Counter rejected;
    private final Counter skipped;
    private final Set<String> windows;

    DynamoDbWriter(DynamoDbAggregates sink, WriterInitContext context,
            Collection<BufferedRequestState<AggregateWrite>> states) {
        super(sink.converter(), context,
                AsyncSinkWriterConfiguration.builder()
                        .setMaxBatchSize(sink.maxBatchSize())
                        .setMaxBatchSizeInBytes(sink.maxBatchBytes())
                        .setMaxInFlightRequests(sink.maxInFlight())
                        .setMaxBufferedRequests(sink.maxBuffered())
                        .setMaxTimeInBufferMS(sink.maxDelayMs())
                        .setMaxRecordSizeInBytes(sink.maxRecordBytes())
                        .build(),
                states);
        this.table = sink.table;
        this.deadLetterDir = sink.deadLetterDir;
        this.subtask = context.getTaskInfo().getIndexOfThisSubtask();
        this.maxRounds = sink.maxRounds;
        this.dynamo = sink.clients.dynamoDb(sink.sdkAttempts);
        this.requests = new ExecutorService[Math.max(1, sink.maxInFlight()) * 4];
        for (int i = 0; i < requests.length; i++) {
            requests[i] = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "dynamodb-writes-" + table);
                thread.setDaemon(true);
                return thread;
            });
        }
        this.written = context.metricGroup().counter("dynamodbWritten");
        this.stale = context.metricGroup().counter("dynamodbStale");
        this.throttled = context.metricGroup().counter("dynamodbThrottled");
        this.rejected = context.metricGroup().counter("dynamodbRejected");
        this.skipped = context.metricGroup().counter("dynamodbSkippedWindows");
        this.windows = sink.windows;
    }

    /** An aggregate of a window kind not written ({@code --dynamodb-windows}) is skipped here. */
    @Override
    public void write(String element, Context context) throws IOException, InterruptedException {
        if (windows.contains(AggregateItems.windowKind(element))) {
            super.write(element, context);
        } else {
            skipped.inc();
        }
    }

    @Override
    protected void submitRequestEntries(List<AggregateWrite> entries, ResultHandler<AggregateWrite> result) {
        List<AggregateWrite> again = new ArrayList<>();
        List<String> dead = new ArrayList<>();
        Exception[] fatal = new Exception[1];
        AtomicInteger pending = new AtomicInteger(entries.size());
        for (AggregateWrite entry : entries) {
            // One key's firings one after another: the conditional writes of two firings of one
            // window never race (a table without atomic conditions, such as a local emulator's,
            // could otherwise keep the older).
            int lane = Math.floorMod(keyOf(entry.json).hashCode(), requests.length);
            requests[lane].execute(() -> {
                Outcome outcome;
                try {
                    outcome = write(entry);
                } catch (Exception e) {
                    outcome = Outcome.fatal(e);
                }
                synchronized (again) {
                    if (outcome.fatal != null) {
                        fatal[0] = outcome.fatal;
                    } else if (outcome.retry) {
                        again.add(entry.failedAgain());
                    } else if (outcome.deadLetter != null) {
                        dead.add(outcome.deadLetter);
                    }
                }
                if (pending.decrementAndGet() == 0) {
                    finish(result, again, dead, fatal[0]);
                }
            });
        }
    }

    private void finish(ResultHandler<AggregateWrite> result, List<AggregateWrite> again, List<String> dead,
            Exception fatal) {
        if (!dead.isEmpty()) {
            try {
                writeDeadLetters(dead);
            } catch (IOException e) {
                result.completeExceptionally(e);
                return;
            }
        }
        if (fatal != null) {
            result.completeExceptionally(fatal);
            return;
        }
        if (again.isEmpty()) {
            result.complete();
            return;
        }
        int rounds = 0;
        for (AggregateWrite entry : again) {
            rounds = Math.max(rounds, entry.failures);
        }
        try {
            Thread.sleep(Math.min(5_000L, 100L << Math.min(rounds, 6))); // a pause before the next round
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        result.retryForEntries(again);
    }

    /** What became of one item. */
    static final class Outcome {
        boolean retry;
        String deadLetter;
        Exception fatal;

        static Outcome done() {
            return new Outcome();
        }

        static Outcome fatal(Exception e) {
            Outcome o = new Outcome();
            o.fatal = e;
            return o;
        }
    }

    private Outcome write(AggregateWrite entry) {
        Map<String, AttributeValue> item;
        try {
            item = AggregateItems.item(entry.json);
        } catch (RuntimeException e) {
            return rejected(entry, "not an aggregate: " + e.getMessage());
        }
        try {
            dynamo.putItem(AggregateItems.put(table, item));
            written.inc();
            return Outcome.done();
        } catch (ConditionalCheckFailedException e) {
            stale.inc(); // the table holds this firing or a newer one
            return Outcome.done();
        } catch (DynamoDbException e) {
            String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
            if (tableOrCredentials(code)) {
                return Outcome.fatal(new IllegalStateException(
                        "DynamoDB table " + table + ": " + code + ": " + e.awsErrorDetails().errorMessage()));
            }
            if (e.isThrottlingException() || e.statusCode() >= 500 || throttling(code)) {
                return retried(entry, code);
            }
            return rejected(entry, code + ": " + (e.awsErrorDetails() == null ? e.getMessage()
                    : e.awsErrorDetails().errorMessage()));
        } catch (SdkClientException e) {
            if (e.getMessage() != null && e.getMessage().contains("credentials")) {
                return Outcome.fatal(new IllegalStateException("DynamoDB: " + e.getMessage()));
            }
            return retried(entry, e.getMessage());
        }
    }

    private Outcome retried(AggregateWrite entry, String why) {
        throttled.inc();
        if (entry.failures + 1 >= maxRounds) {
            return rejected(entry, "still failing after " + maxRounds + " rounds: " + why);
        }
        Outcome o = new Outcome();
        o.retry = true;
        return o;
    }

    private Outcome rejected(AggregateWrite entry, String detail) {
        rejected.inc();
        LOG.warn("DynamoDB table {}: an aggregate is dead-lettered ({})", table, detail);
        Outcome o = new Outcome();
        o.deadLetter = deadLetter(entry.json, detail);
        return o;
    }

    static boolean throttling(String code) {
        return "ProvisionedThroughputExceededException".equals(code) || "ThrottlingException".equals(code)
                || "RequestLimitExceeded".equals(code) || "InternalServerError".equals(code)
                || "ServiceUnavailable".equals(code) || "TransactionConflictException".equals(code);
    }

    static boolean tableOrCredentials(String code) {
        return "ResourceNotFoundException".equals(code) || "AccessDeniedException".equals(code)
                || "UnrecognizedClientException".equals(code) || "InvalidSignatureException".equals(code)
                || "MissingAuthenticationTokenException".equals(code) || "ExpiredTokenException".equals(code)
                || "IncompleteSignatureException".equals(code);
    }

    /**
     * A dead letter as the job writes them ({@code ais_pipeline.rules.outputs.dead_letter_json}):
     * its id the name-based UUID of its reason and the aggregate's line, no receiver.
     */
    static String deadLetter(String raw, String detail) {
        String name = "dead_letter\u001f" + REASON + "\u001f\u001f" + raw;
        ObjectNode obj = JSON.createObjectNode();
        obj.put("id", UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)).toString());
        obj.put("raw", raw);
        obj.put("reason", REASON);
        obj.put("detail", detail);
        return obj.toString();
    }

    /** The item key of an aggregate's line, cheaply: its cell and window start fields. */
    static String keyOf(String json) {
        int cell = json.indexOf("\"cell\":");
        int start = json.indexOf("\"window_start\":");
        return (cell < 0 ? "" : json.substring(cell, Math.min(json.length(), cell + 24)))
                + (start < 0 ? "" : json.substring(start, Math.min(json.length(), start + 40)));
    }

    /** Appended to this writer's own file in the dead-letter folder, and flushed. */
    private synchronized void writeDeadLetters(List<String> dead) throws IOException {
        if (deadLetterDir.isEmpty()) {
            return;
        }
        if (deadLetters == null) {
            Path dir = Paths.get(deadLetterDir.startsWith("file:") ? URI.create(deadLetterDir).getPath() : deadLetterDir);
            Files.createDirectories(dir);
            Path file = dir.resolve("dynamodb-" + subtask + "-" + UUID.randomUUID() + ".jsonl");
            deadLetters = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        }
        for (String line : dead) {
            deadLetters.write(line);
            deadLetters.write('\n');
        }
        deadLetters.flush();
    }

    @Override
    protected long getSizeInBytes(AggregateWrite entry) {
        return entry.json.length();
    }

    @Override
    public void close() {
        super.close();
        for (ExecutorService lane : requests) {
            lane.shutdownNow();
        }
        synchronized (this) {
            if (deadLetters != null) {
                try {
                    deadLetters.close();
                } catch (IOException e) {
                    LOG.warn("DynamoDB table {}: the dead-letter file did not close: {}", table, e.getMessage());
                }
            }
        }
        dynamo.close();
    }
}
