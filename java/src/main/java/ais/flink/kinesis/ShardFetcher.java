package ais.flink.kinesis;

import ais.flink.feeds.LineSplitter;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.ExpiredIteratorException;
import software.amazon.awssdk.services.kinesis.model.GetRecordsRequest;
import software.amazon.awssdk.services.kinesis.model.GetRecordsResponse;
import software.amazon.awssdk.services.kinesis.model.GetShardIteratorRequest;
import software.amazon.awssdk.services.kinesis.model.KinesisException;
import software.amazon.awssdk.services.kinesis.model.Record;
import software.amazon.awssdk.services.kinesis.model.ResourceNotFoundException;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * Reads a reader's shards by polling (GetRecords) and hands their records on in the order the
 * stream received them: the records of all its shards are merged by arrival time, so a lane
 * that reads several shards sees their lines in the order they were written, as a file holds
 * them (a record is handed on once every other shard has a later one waiting, or has been read
 * up to its end since). Within a shard, records keep their sequence order.
 *
 * <p>Each shard is polled at most every {@value #POLL_INTERVAL_MS} ms (Kinesis allows five calls
 * a second per shard). {@code ProvisionedThroughputExceeded}, other throttling, server errors and
 * lost connections back a shard off, doubling from {@value #POLL_INTERVAL_MS} ms to
 * {@value #MAX_BACKOFF_MS} ms, with jitter, and are counted; an expired iterator is renewed
 * after the last record fetched. A shard ends when it is closed (a resharding) and read through,
 * or, in a bounded run, at its first record that arrived after the run started, or once it has
 * been read up to its end after that time.
 */
final class ShardFetcher implements SplitReader<ShardRecord, ShardSplit> {
    private static final Logger LOG = LoggerFactory.getLogger(ShardFetcher.class);

    static final long POLL_INTERVAL_MS = 200;
    static final long MAX_BACKOFF_MS = 10_000;
    static final int RECORDS_PER_CALL = 1000;
    private static final int MAX_HANDED_ON = 2000;
    private static final long MAX_FETCH_MS = 1000;

    private final KinesisClient kinesis;
    private final Counter throttled;
    private final Map<String, Shard> shards = new TreeMap<>();
    private final Object wake = new Object();
    private volatile boolean wakeUp;

    ShardFetcher(KinesisClient kinesis, Counter throttled) {
        this.kinesis = kinesis;
        this.throttled = throttled;
    }

    /** A shard being read: the fetched records not yet handed on, and where the next call reads. */
    static final class Shard {
        final ShardSplit split;
        String iterator;
        String lastFetched;
        final ArrayDeque<ShardRecord> buffer = new ArrayDeque<>();
        boolean ended;
        /** When the last call that found the shard read to its end was sent (local clock). */
        long caughtUpAt = Long.MIN_VALUE;
        long nextPollAt;
        long backoffMs = POLL_INTERVAL_MS;

        Shard(ShardSplit split) {
            this.split = split;
            if (split.start == ShardSplit.Start.AFTER_SEQUENCE_NUMBER) {
                lastFetched = split.startValue;
            }
        }

        boolean needsPoll() {
            return buffer.isEmpty() && !ended;
        }
    }

    @Override
    public RecordsWithSplitIds<ShardRecord> fetch() throws IOException {
        long deadline = System.currentTimeMillis() + MAX_FETCH_MS;
        wakeUp = false;
        while (true) {
            long now = System.currentTimeMillis();
            for (Shard shard : shards.values()) {
                if (shard.needsPoll() && now >= shard.nextPollAt) {
                    poll(shard);
                }
            }
            MergedRecords out = merge();
            if (!out.isEmpty() || wakeUp || shards.isEmpty() || System.currentTimeMillis() >= deadline) {
                return out;
            }
            long due = Long.MAX_VALUE;
            for (Shard shard : shards.values()) {
                if (shard.needsPoll()) {
                    due = Math.min(due, shard.nextPollAt);
                }
            }
            long wait = Math.max(1, Math.min(due, deadline) - System.currentTimeMillis());
            synchronized (wake) {
                if (!wakeUp) {
                    try {
                        wake.wait(wait);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return out;
                    }
                }
            }
        }
    }

    /** What can be handed on now, oldest arrival first; shards read to their end, finished. */
    MergedRecords merge() {
        MergedRecords out = new MergedRecords();
        for (int handed = 0; handed < MAX_HANDED_ON; handed++) {
            Shard best = null;
            long bound = Long.MAX_VALUE;
            for (Shard shard : shards.values()) {
                if (!shard.buffer.isEmpty()) {
                    if (best == null || shard.buffer.peekFirst().arrivedAt < best.buffer.peekFirst().arrivedAt) {
                        best = shard;
                    }
                } else if (!shard.ended) {
                    bound = Math.min(bound, shard.caughtUpAt);
                }
            }
            if (best == null || best.buffer.peekFirst().arrivedAt >= bound) {
                break;
            }
            out.add(best.split.shardId, best.buffer.pollFirst());
        }
        for (Iterator<Shard> it = shards.values().iterator(); it.hasNext(); ) {
            Shard shard = it.next();
            if (shard.ended && shard.buffer.isEmpty()) {
                out.finished(shard.split.shardId);
                it.remove();
            }
        }
        return out;
    }

    private void poll(Shard shard) throws IOException {
        long sentAt = System.currentTimeMillis();
        try {
            if (shard.iterator == null) {
                shard.iterator = iterator(shard);
            }
            GetRecordsResponse response = kinesis.getRecords(
                    GetRecordsRequest.builder().shardIterator(shard.iterator).limit(RECORDS_PER_CALL).build());
            shard.backoffMs = POLL_INTERVAL_MS;
            shard.nextPollAt = sentAt + POLL_INTERVAL_MS;
            shard.iterator = response.nextShardIterator();
            List<Record> records = response.records();
            for (Record record : records) {
                long arrived = record.approximateArrivalTimestamp() == null ? sentAt
                        : record.approximateArrivalTimestamp().toEpochMilli();
                shard.lastFetched = record.sequenceNumber();
                if (arrived > shard.split.stopAt) {
                    shard.ended = true; // a bounded run: written after the run started
                    break;
                }
                shard.buffer.addLast(new ShardRecord(lines(record.data().asByteArrayUnsafe()), record.sequenceNumber(),
                        arrived));
            }
            Long behind = response.millisBehindLatest();
            if (records.isEmpty() && behind != null && behind == 0) {
                shard.caughtUpAt = sentAt;
                if (shard.split.bounded() && sentAt > shard.split.stopAt) {
                    shard.ended = true;
                }
            }
            if (shard.iterator == null) {
                shard.ended = true; // a closed shard, read through
                LOG.info("Kinesis shard {}: closed and read to its end", shard.split.shardId);
            }
        } catch (ExpiredIteratorException e) {
            shard.iterator = null;
        } catch (ResourceNotFoundException e) {
            if (shard.iterator == null && shard.split.parents.isEmpty() && shard.lastFetched == null) {
                throw new IOException("Kinesis stream " + shard.split.stream + ": " + e.awsErrorDetails().errorMessage(),
                        e);
            }
            // a shard past the stream's retention: nothing left to read in it
            LOG.warn("Kinesis shard {}: gone ({}); taken as read", shard.split.shardId, e.getMessage());
            shard.ended = true;
        } catch (KinesisException e) {
            if (!retryable(e)) {
                throw new IOException("Kinesis stream " + shard.split.stream + ", shard " + shard.split.shardId + ": "
                        + e.getMessage(), e);
            }
            backOff(shard, sentAt, e.awsErrorDetails() == null ? e.toString() : e.awsErrorDetails().errorCode());
        } catch (SdkClientException e) {
            backOff(shard, sentAt, e.getMessage()); // no answer: the network, a timeout
        }
    }

    static boolean retryable(KinesisException e) {
        if (e.statusCode() >= 500 || e.isThrottlingException()) {
            return true;
        }
        String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
        return "ProvisionedThroughputExceededException".equals(code) || "LimitExceededException".equals(code)
                || "KMSThrottlingException".equals(code) || "ThrottlingException".equals(code)
                || "InternalFailure".equals(code) || "ServiceUnavailable".equals(code);
    }

    private void backOff(Shard shard, long now, String why) {
        throttled.inc();
        long jitter = ThreadLocalRandom.current().nextLong(shard.backoffMs / 4 + 1);
        shard.nextPollAt = now + shard.backoffMs + jitter;
        if (shard.backoffMs >= MAX_BACKOFF_MS / 2) {
            LOG.warn("Kinesis shard {}: {}; backing off {} ms", shard.split.shardId, why, shard.backoffMs);
        }
        shard.backoffMs = Math.min(MAX_BACKOFF_MS, shard.backoffMs * 2);
    }

    private String iterator(Shard shard) {
        GetShardIteratorRequest.Builder request = GetShardIteratorRequest.builder()
                .streamName(shard.split.stream)
                .shardId(shard.split.shardId);
        if (shard.lastFetched != null) {
            request.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER).startingSequenceNumber(shard.lastFetched);
        } else if (shard.split.start == ShardSplit.Start.AT_TIMESTAMP) {
            request.shardIteratorType(ShardIteratorType.AT_TIMESTAMP)
                    .timestamp(Instant.ofEpochMilli(Long.parseLong(shard.split.startValue)));
        } else {
            request.shardIteratorType(ShardIteratorType.TRIM_HORIZON);
        }
        return kinesis.getShardIterator(request.build()).shardIterator();
    }

    /** A record's lines, as a file's: split on line breaks, not UTF-8 replaced, an empty record one empty line. */
    static String[] lines(byte[] data) {
        LineSplitter splitter = new LineSplitter();
        List<String> lines = splitter.feed(data, 0, data.length);
        String last = splitter.end();
        if (last != null) {
            lines.add(last);
        }
        if (lines.isEmpty()) {
            lines = new ArrayList<>(1);
            lines.add("");
        }
        return lines.toArray(new String[0]);
    }

    @Override
    public void handleSplitsChanges(SplitsChange<ShardSplit> change) {
        if (!(change instanceof SplitsAddition)) {
            throw new UnsupportedOperationException("Kinesis: " + change.getClass().getSimpleName());
        }
        for (ShardSplit split : change.splits()) {
            shards.put(split.shardId, new Shard(split));
        }
    }

    @Override
    public void wakeUp() {
        synchronized (wake) {
            wakeUp = true;
            wake.notifyAll();
        }
    }

    @Override
    public void close() {
        kinesis.close();
    }
}
