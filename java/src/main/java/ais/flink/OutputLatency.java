package ais.flink;

import java.time.Instant;
import java.time.format.DateTimeParseException;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * One output's records passed on unchanged on their way to the sinks, each one's latency measured:
 * the wall clock as it passes less its event time (the JSON field {@code field}: a position's
 * {@code timestamp}, a window's {@code window_end}, an event's {@code as_of}). Gauges of the last
 * minute's records, in the group {@code output.<name>}: {@code latency_p50_ms},
 * {@code latency_p99_ms}, {@code latency_max_ms} and {@code latency_records} (-1 for the
 * latencies of a minute without a record). A record without the field, or whose field is not a
 * time, is passed on and not measured.
 */
public final class OutputLatency extends RichMapFunction<String, String> {
    private static final long serialVersionUID = 1L;

    private final String output;
    private final String needle;
    private transient LatencyWindow window;

    public OutputLatency(String output, String field) {
        this.output = output;
        this.needle = "\"" + field + "\":\"";
    }

    @Override
    public void open(OpenContext context) {
        window = new LatencyWindow();
        MetricGroup group = getRuntimeContext().getMetricGroup().addGroup("output", output);
        group.gauge("latency_p50_ms", (Gauge<Long>) () -> window.quantile(0.5, System.currentTimeMillis()));
        group.gauge("latency_p99_ms", (Gauge<Long>) () -> window.quantile(0.99, System.currentTimeMillis()));
        group.gauge("latency_max_ms", (Gauge<Long>) () -> window.quantile(1.0, System.currentTimeMillis()));
        group.gauge("latency_records", (Gauge<Long>) () -> window.count(System.currentTimeMillis()));
    }

    @Override
    public String map(String record) {
        long time = eventTime(record, needle);
        if (time != Long.MIN_VALUE) {
            long now = System.currentTimeMillis();
            window.add(now, now - time);
        }
        return record;
    }

    /** The ISO time after {@code needle} in a JSON record, epoch ms; Long.MIN_VALUE for none. */
    static long eventTime(String record, String needle) {
        int at = record.indexOf(needle);
        if (at < 0) {
            return Long.MIN_VALUE;
        }
        int start = at + needle.length();
        int end = record.indexOf('"', start);
        if (end < 0) {
            return Long.MIN_VALUE;
        }
        try {
            return Instant.parse(record.substring(start, end)).toEpochMilli();
        } catch (DateTimeParseException e) {
            return Long.MIN_VALUE;
        }
    }

    /**
     * Latencies of the last minute, in six slots of 10 s of wall clock, each a histogram: 10 ms
     * buckets up to 10 s, 1 s buckets up to 10 minutes, 1 minute buckets up to a day (a latency
     * is given as its bucket's upper bound). Added to by the task's thread, read by the metric
     * threads.
     */
    static final class LatencyWindow {
        static final int SLOTS = 6;
        static final long SLOT_MS = 10_000;
        static final int BUCKETS = 1000 + 590 + 1430 + 1;

        private final int[][] counts = new int[SLOTS][BUCKETS];
        private final long[] slotStart = new long[SLOTS];
        private final long[] slotMax = new long[SLOTS];

        LatencyWindow() {
            java.util.Arrays.fill(slotStart, Long.MIN_VALUE);
        }

        static int bucket(long ms) {
            if (ms < 10_000) {
                return (int) (Math.max(ms, 0) / 10);
            }
            if (ms < 600_000) {
                return 1000 + (int) ((ms - 10_000) / 1000);
            }
            return (int) Math.min(1590 + (ms - 600_000) / 60_000, BUCKETS - 1);
        }

        static long upper(int bucket) {
            if (bucket < 1000) {
                return (bucket + 1) * 10L;
            }
            if (bucket < 1590) {
                return 10_000 + (bucket - 1000 + 1) * 1000L;
            }
            return 600_000 + (bucket - 1590 + 1) * 60_000L;
        }

        private int slot(long now) {
            long start = now - Math.floorMod(now, SLOT_MS);
            int i = (int) Math.floorMod(start / SLOT_MS, (long) SLOTS);
            if (slotStart[i] != start) {
                java.util.Arrays.fill(counts[i], 0);
                slotStart[i] = start;
                slotMax[i] = Long.MIN_VALUE;
            }
            return i;
        }

        synchronized void add(long now, long latencyMs) {
            int i = slot(now);
            counts[i][bucket(latencyMs)]++;
            slotMax[i] = Math.max(slotMax[i], latencyMs);
        }

        private boolean recent(int i, long now) {
            return slotStart[i] != Long.MIN_VALUE && slotStart[i] > now - SLOTS * SLOT_MS;
        }

        synchronized long count(long now) {
            long n = 0;
            for (int i = 0; i < SLOTS; i++) {
                if (recent(i, now)) {
                    for (int c : counts[i]) {
                        n += c;
                    }
                }
            }
            return n;
        }

        /** The {@code q} quantile of the last minute's latencies (1.0: the largest), -1 for none. */
        synchronized long quantile(double q, long now) {
            long total = 0;
            long max = Long.MIN_VALUE;
            long[] sum = new long[BUCKETS];
            for (int i = 0; i < SLOTS; i++) {
                if (!recent(i, now)) {
                    continue;
                }
                max = Math.max(max, slotMax[i]);
                for (int b = 0; b < BUCKETS; b++) {
                    sum[b] += counts[i][b];
                    total += counts[i][b];
                }
            }
            if (total == 0) {
                return -1;
            }
            if (q >= 1.0) {
                return max;
            }
            long rank = (long) Math.ceil(q * total);
            long seen = 0;
            for (int b = 0; b < BUCKETS; b++) {
                seen += sum[b];
                if (seen >= rank) {
                    return Math.min(upper(b), max);
                }
            }
            return max;
        }
    }
}
