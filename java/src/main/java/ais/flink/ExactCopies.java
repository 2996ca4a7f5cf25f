package ais.flink;

import java.util.Iterator;
import java.util.Map;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * The dedup's first rule, exact copies, keyed by vessel on Flink's keyed state and event-time
 * timers: the logic of {@code ais_pipeline.rules.copies.ExactCopies} (the reference, which the
 * plain loop runs; {@code tests/golden/exact_copies.json} holds cases both must pass).
 *
 * <p>Input and output: {@code Row(mmsi, WireReport)}, a report with its fields packed in one
 * string ({@code ais_pipeline.rules.records.pack_report}: event time, message type, identity,
 * payload, fill bits, ...). A report that is not a copy leaves as it came; a copy leaves as its
 * MMSI, watermark and a packed field of {@link #COPY_MARK} and its event time, for the vessel
 * operator to count, so that only the two numbers cross into Python.
 *
 * <ul>
 *   <li>A report of any type but 5 and 24 is a copy when the vessel sent one of the same identity
 *       whose event time is within the TTL of its own; a copy changes nothing.
 *   <li>Otherwise the vessel's newest time moves to the report's (if later), identities older
 *       than the horizon behind it are forgotten once it has moved a TTL since the last look, and
 *       the report's identity is remembered with its event time (not for types 5 and 24).
 *   <li>A vessel's state is dropped when the watermark passes its newest time plus the horizon
 *       (a timer at the first watermark step at or after it; one that finds the newest time moved
 *       is set again): no state or timer is left of a silent vessel.
 * </ul>
 */
public final class ExactCopies extends KeyedProcessFunction<Long, Row, Row> {
    private static final long serialVersionUID = 1L;

    /** What a copy's packed field starts with (the ASCII record separator). */
    public static final char COPY_MARK = '\u001e';
    static final char SEPARATOR = '\u001f';
    static final String SEEN_STATE = "seen";
    static final String IDS_STATE = "ids";

    private final long ttlMs;
    private final long horizonMs;
    private final long stepMs;
    private final int packedIndex;
    private final int watermarkIndex;
    private final int mmsiIndex;

    /** newest event time, when the identities were last pruned, the pending cleanup timer. */
    private transient ValueState<long[]> seen;

    private transient MapState<String, Long> ids;

    public ExactCopies(long ttlMs, long horizonMs, long stepMs, RowTypeInfo reportType) {
        if (stepMs <= 0) {
            throw new IllegalArgumentException("the watermark's step must be positive: " + stepMs);
        }
        this.ttlMs = ttlMs;
        this.horizonMs = horizonMs;
        this.stepMs = stepMs;
        this.mmsiIndex = RecordLayout.field(reportType, "mmsi", Types.LONG);
        this.watermarkIndex = RecordLayout.field(reportType, "watermark", Types.LONG);
        this.packedIndex = RecordLayout.field(reportType, "packed", Types.STRING);
    }

    @Override
    public void open(OpenContext openContext) {
        seen = getRuntimeContext()
                .getState(new ValueStateDescriptor<>(SEEN_STATE, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        ids = getRuntimeContext().getMapState(new MapStateDescriptor<>(IDS_STATE, Types.STRING, Types.LONG));
    }

    /** The first {@code k * step - 1} at or after {@code ts} (the reference's {@code timer_at_or_after}). */
    long timerAtOrAfter(long ts) {
        return Math.floorDiv(ts + 1 + stepMs - 1, stepMs) * stepMs - 1;
    }

    static boolean isStatic(int msgType) {
        return msgType == 5 || msgType == 24;
    }

    /** The identity of a packed report: its own field, or the payload and fill bits. */
    static String identity(String packed, int[] at) {
        String own = packed.substring(at[1] + 1, at[2]);
        return own.isEmpty() ? packed.substring(at[2] + 1, at[4]).replace(SEPARATOR, ',') : own;
    }

    /** Keys {@code Row(mmsi, report)} records on their MMSI, a {@code Long}: cheaper to hash and
     * compare in keyed state than the {@code Row(key)} that PyFlink's key selector makes. */
    public static final class ByMmsi implements KeySelector<Row, Long>, ResultTypeQueryable<Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long getKey(Row record) {
            return (Long) record.getField(0);
        }

        @Override
        public TypeInformation<Long> getProducedType() {
            return Types.LONG;
        }
    }

    /** The places of the first five separators of a packed report. */
    static int[] separators(String packed) {
        int[] at = new int[5];
        int from = 0;
        for (int i = 0; i < 5; i++) {
            int next = packed.indexOf(SEPARATOR, from);
            if (next < 0) {
                throw new IllegalArgumentException("not a packed report: " + packed);
            }
            at[i] = next;
            from = next + 1;
        }
        return at;
    }

    @Override
    public void processElement(Row record, Context ctx, Collector<Row> out) throws Exception {
        Row report = (Row) record.getField(1);
        String packed = (String) report.getField(packedIndex);
        int[] at = separators(packed);
        long ts = Long.parseLong(packed, 0, at[0], 10);
        int msgType = Integer.parseInt(packed, at[0] + 1, at[1], 10);
        String identity = isStatic(msgType) ? null : identity(packed, at);
        if (decide(ts, identity, ctx)) {
            Row copy = new Row(report.getArity());
            copy.setField(mmsiIndex, report.getField(mmsiIndex));
            copy.setField(watermarkIndex, report.getField(watermarkIndex));
            copy.setField(packedIndex, COPY_MARK + Long.toString(ts));
            out.collect(Row.of(record.getField(0), copy));
        } else {
            out.collect(record);
        }
    }

    /** Whether the report is a copy; the vessel's state is updated as the reference does. */
    boolean decide(long ts, String identity, Context ctx) throws Exception {
        long[] s = seen.value();
        if (s == null) {
            s = new long[] {ts, ts, timerAtOrAfter(ts + horizonMs)};
            ctx.timerService().registerEventTimeTimer(s[2]);
        } else {
            if (identity != null) {
                Long first = ids.get(identity);
                if (first != null && Math.abs(ts - first) <= ttlMs) {
                    return true;
                }
            }
            if (ts > s[0]) {
                s[0] = ts;
            }
            if (s[0] - s[1] >= ttlMs) {
                prune(s[0] - horizonMs);
                s[1] = s[0];
            }
        }
        if (identity != null) {
            ids.put(identity, ts);
        }
        seen.update(s);
        return false;
    }

    private void prune(long horizon) throws Exception {
        for (Iterator<Map.Entry<String, Long>> it = ids.iterator(); it.hasNext(); ) {
            if (it.next().getValue() < horizon) {
                it.remove();
            }
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Row> out) throws Exception {
        long[] s = seen.value();
        if (s == null || s[2] != timestamp) {
            return;
        }
        if (s[0] + horizonMs <= timestamp) {
            seen.clear();
            ids.clear();
            return;
        }
        s[2] = timerAtOrAfter(Math.max(s[0] + horizonMs, timestamp + 1));
        ctx.timerService().registerEventTimeTimer(s[2]);
        seen.update(s);
    }
}
