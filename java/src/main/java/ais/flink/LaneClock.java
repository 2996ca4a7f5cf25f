package ais.flink;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * How far in event time a file reader has read, for Flink's watermark alignment of parallel file
 * lanes ({@code --lanes per-file}): raw lines in, a watermark out that follows the lines'
 * receivers by the rule of the job's watermarks ({@link ReceiverClocks}), from the times a line
 * carries before it is parsed: a tag block's {@code c:} (and {@code s:} as its receiver), or an
 * archive row's time (ISO {@code 2025-01-01T00:00:00} as NOAA writes it, {@code 01/01/2024
 * 00:00:00} as the DMA does) in one of its first three fields.
 *
 * <p>These watermarks only pace the readers: a reader whose watermark is more than the allowed
 * drift ahead of the slowest one waits. The job's own watermarks, late decisions and windows
 * come from the parsed lines downstream ({@link ReceiverWatermarks}); these end at the batching of
 * lines ({@link LineBatches}), so the outputs of a lane do not depend on them.
 */
final class LaneClock implements WatermarkGenerator<String> {
    static final String GROUP = "file-lanes";

    private final ReceiverClocks clocks;
    private final long[] time = new long[1]; // timeOf's answer, reused: onEvent runs for every line
    private long emitted = Long.MIN_VALUE;

    LaneClock(ReceiverClocks clocks) {
        this.clocks = clocks;
    }

    /**
     * The watermark strategy of file lanes: {@link LaneClock}s under alignment, each lane at
     * most {@code maxDriftMillis} ahead of the slowest one, checked every {@code updateMillis}.
     */
    static WatermarkStrategy<String> aligned(
            long outOfOrderness,
            long idleTimeout,
            long maxClockSkew,
            int consensusLines,
            int warmUpLines,
            int jumpLines,
            long maxDriftMillis,
            long updateMillis) {
        WatermarkStrategy<String> clock = context -> new LaneClock(
                new ReceiverClocks(outOfOrderness, idleTimeout, maxClockSkew, consensusLines, warmUpLines, jumpLines));
        return clock.withWatermarkAlignment(
                GROUP, Duration.ofMillis(maxDriftMillis), Duration.ofMillis(updateMillis));
    }

    @Override
    public void onEvent(String line, long eventTimestamp, WatermarkOutput output) {
        time[0] = ReceiverClocks.TIME_UNKNOWN;
        String receiver = timeOf(line, time);
        clocks.observe(receiver, time[0]);
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        long watermark = clocks.watermark;
        if (watermark != ReceiverClocks.TIME_UNKNOWN && watermark > emitted) {
            emitted = watermark;
            output.emitWatermark(new Watermark(watermark));
        }
    }

    /**
     * A raw line's event time into {@code time[0]} (epoch ms; left as it is when the line has
     * none) and its receiver ("" when it names none).
     */
    static String timeOf(String line, long[] time) {
        if (line.startsWith("\\")) {
            return tagBlock(line, time);
        }
        if (line.startsWith("!") || line.startsWith("$") || line.startsWith("{") || line.startsWith("#")) {
            return "";
        }
        long logged = leadingEpoch(line);
        if (logged != ReceiverClocks.TIME_UNKNOWN) {
            int bang = line.indexOf('!');
            int tag = line.indexOf('\\');
            String receiver = tag > 0 && (bang < 0 || tag < bang) ? tagBlock(line.substring(tag), time) : "";
            if (time[0] == ReceiverClocks.TIME_UNKNOWN) {
                time[0] = logged;
            }
            return receiver;
        }
        int start = 0;
        for (int field = 0; field < 3 && start < line.length(); field++) {
            int end = line.indexOf(',', start);
            if (end < 0) {
                end = line.length();
            }
            long t = rowTime(line, start, end);
            if (t != ReceiverClocks.TIME_UNKNOWN) {
                time[0] = t;
                return "";
            }
            start = end + 1;
        }
        return "";
    }

    private static String tagBlock(String line, long[] time) {
        int end = line.indexOf('\\', 1);
        if (end < 0) {
            return "";
        }
        int star = line.lastIndexOf('*', end);
        int stop = star > 0 ? star : end;
        String receiver = "";
        int start = 1;
        while (start < stop) {
            int comma = line.indexOf(',', start);
            int fieldEnd = comma < 0 || comma > stop ? stop : comma;
            if (fieldEnd - start > 2 && line.charAt(start + 1) == ':') {
                char key = line.charAt(start);
                if (key == 'c') {
                    long t = epoch(line, start + 2, fieldEnd);
                    if (t != ReceiverClocks.TIME_UNKNOWN) {
                        time[0] = t;
                    }
                } else if (key == 's') {
                    receiver = line.substring(start + 2, fieldEnd);
                }
            }
            start = fieldEnd + 1;
        }
        return receiver;
    }

    /**
     * A logger's leading epoch time (``1550303566167726840 !AIVDM,...``: seconds, ms, us or ns by
     * the number of digits, as {@code ais_pipeline.rules.prefixes} reads it) before a sentence or
     * a tag block, or TIME_UNKNOWN.
     */
    static long leadingEpoch(String line) {
        int i = 0;
        long v = 0;
        while (i < line.length() && i < 21 && line.charAt(i) >= '0' && line.charAt(i) <= '9') {
            v = v * 10 + (line.charAt(i) - '0');
            i++;
        }
        int digits = i;
        while (i < line.length() && line.charAt(i) != '!' && line.charAt(i) != '\\') {
            char c = line.charAt(i);
            if (c != '.' && c != ' ' && c != '\t' && c != ',' && c != ';' && (c < '0' || c > '9')) {
                return ReceiverClocks.TIME_UNKNOWN;
            }
            i++;
        }
        if (digits == 0 || digits > 19 || i == line.length() || i == digits) {
            return ReceiverClocks.TIME_UNKNOWN;
        }
        long ms = digits <= 11 ? v * 1000 : digits <= 14 ? v : digits <= 17 ? v / 1000 : v / 1_000_000;
        return ms >= 631_152_000_000L && ms < 4_102_444_800_000L ? ms : ReceiverClocks.TIME_UNKNOWN;
    }

    /** Digits as epoch seconds, or milliseconds from 10^12 on (as the parser reads {@code c:}). */
    private static long epoch(String s, int from, int to) {
        if (to - from > 15) {
            return ReceiverClocks.TIME_UNKNOWN;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return ReceiverClocks.TIME_UNKNOWN;
            }
            v = v * 10 + (c - '0');
        }
        return v >= 1_000_000_000_000L ? v : v * 1000;
    }

    /** {@code yyyy-mm-ddThh:mm:ss} (or a space for the T) or {@code dd/mm/yyyy hh:mm:ss}, UTC. */
    private static long rowTime(String s, int from, int to) {
        if (to - from < 19) {
            return ReceiverClocks.TIME_UNKNOWN;
        }
        try {
            if (s.charAt(from + 4) == '-' && s.charAt(from + 7) == '-') {
                return at(s, from, from + 5, from + 8, from + 11);
            }
            if (s.charAt(from + 2) == '/' && s.charAt(from + 5) == '/') {
                return at(s, from + 6, from + 3, from, from + 11);
            }
        } catch (RuntimeException e) { // not a time after all
            return ReceiverClocks.TIME_UNKNOWN;
        }
        return ReceiverClocks.TIME_UNKNOWN;
    }

    private static long at(String s, int year, int month, int day, int clock) {
        return LocalDateTime.of(
                        digits(s, year, 4),
                        digits(s, month, 2),
                        digits(s, day, 2),
                        digits(s, clock, 2),
                        digits(s, clock + 3, 2),
                        digits(s, clock + 6, 2))
                .toInstant(ZoneOffset.UTC)
                .toEpochMilli();
    }

    private static int digits(String s, int from, int n) {
        int v = 0;
        for (int i = from; i < from + n; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException(s);
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
