package ais.flink;

import java.time.LocalDateTime;
import java.time.ZoneOffset;

/** Epoch milliseconds as ISO 8601 UTC with milliseconds, as {@code ais_pipeline.rules.outputs.iso_ms}. */
final class IsoTime {
    private IsoTime() {}

    static String format(long ms) {
        StringBuilder sb = new StringBuilder(24);
        append(sb, ms);
        return sb.toString();
    }

    static void append(StringBuilder sb, long ms) {
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(ms, 1000L), 0, ZoneOffset.UTC);
        sb.append(t.getYear()).append('-');
        pad2(sb, t.getMonthValue());
        sb.append('-');
        pad2(sb, t.getDayOfMonth());
        sb.append('T');
        pad2(sb, t.getHour());
        sb.append(':');
        pad2(sb, t.getMinute());
        sb.append(':');
        pad2(sb, t.getSecond());
        sb.append('.');
        int milli = (int) Math.floorMod(ms, 1000L);
        if (milli < 100) {
            sb.append('0');
        }
        if (milli < 10) {
            sb.append('0');
        }
        sb.append(milli).append('Z');
    }

    private static void pad2(StringBuilder sb, int v) {
        if (v < 10) {
            sb.append('0');
        }
        sb.append(v);
    }
}
