package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link OutputLatency}: the event time of a record, and the last minute's quantiles. */
class OutputLatencyTest {
    @Test
    void theEventTimeIsTheNamedFieldsIsoTime() {
        String position = "{\"id\":\"x\",\"mmsi\":1,\"timestamp\":\"2026-01-01T00:00:01.250Z\",\"lat\":1.0}";
        assertEquals(1_767_225_601_250L, OutputLatency.eventTime(position, "\"timestamp\":\""));
        assertEquals(Long.MIN_VALUE, OutputLatency.eventTime(position, "\"window_end\":\""));
        assertEquals(Long.MIN_VALUE, OutputLatency.eventTime("{\"as_of\":\"soon\"}", "\"as_of\":\""));
    }

    @Test
    void quantilesAreOfTheLastMinuteToTheirBucket() {
        OutputLatency.LatencyWindow w = new OutputLatency.LatencyWindow();
        long now = 1_000_000;
        assertEquals(-1, w.quantile(0.5, now));
        for (int i = 1; i <= 100; i++) {
            w.add(now, i * 10L); // 10 ms .. 1,000 ms
        }
        w.add(now + 5_000, 42_300); // one slow record
        assertEquals(101, w.count(now + 5_000));
        assertEquals(520, w.quantile(0.5, now + 5_000)); // the 51st, 510 ms: its bucket [510, 520) as its upper bound
        assertEquals(1_010, w.quantile(0.99, now + 5_000)); // the 100th of 101, 1,000 ms
        assertEquals(42_300, w.quantile(1.0, now + 5_000));
        // A minute on, those records are gone; a new one counts alone.
        w.add(now + 61_000, 2_000);
        assertEquals(1, w.count(now + 61_000));
        assertEquals(2_000, w.quantile(0.99, now + 61_000));
        assertEquals(-1, w.quantile(0.5, now + 200_000));
    }

    @Test
    void bucketsCoverADayAndNegativeLatenciesCountAsNone() {
        assertEquals(0, OutputLatency.LatencyWindow.bucket(-5));
        assertEquals(999, OutputLatency.LatencyWindow.bucket(9_999));
        assertEquals(1000, OutputLatency.LatencyWindow.bucket(10_000));
        assertEquals(OutputLatency.LatencyWindow.BUCKETS - 1, OutputLatency.LatencyWindow.bucket(10L * 86_400_000));
        assertEquals(10_000, OutputLatency.LatencyWindow.upper(999));
        assertEquals(11_000, OutputLatency.LatencyWindow.upper(1000));
    }
}
