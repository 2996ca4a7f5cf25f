package ais.flink;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * What the stream heard around each gap, keyed by 1-degree cell: the logic of {@code
 * ais_pipeline.rules.coverage.CellCoverage} (the reference, which the plain loop runs; {@code
 * tests/golden/coverage.json} holds cases both must pass).
 *
 * <p>Input 1: {@code VesselPane} rows; the reports the tumbling windows count (kept, in time for
 * their tumbling window) are added up per hour and vessel in the cell of their geohash cell's
 * centre. Input 2: gap records (JSON lines of the vessel operator), in the cell of their start.
 * Output: each gap record once the hours it covers are final (their end plus the allowed lateness
 * and the hours grace), with {@code coverage_cell}, {@code coverage_reports} and {@code
 * coverage_vessels} added (other vessels' reports only).
 *
 * <p>A cell keeps an hour while a gap not yet seen could need it, and longer only from the start
 * of a gap open in it, until that gap closes or the gap TTL after its start: a cell with neither
 * holds nothing.
 */
public final class GapCoverage extends KeyedCoProcessFunction<String, Row, String, String> {
    private static final long serialVersionUID = 1L;
    static final long HOUR_MS = 3_600_000L;
    static final String HOURS_STATE = "coverage-hours";
    static final String WAITING_STATE = "coverage-waiting";
    static final String PINNED_STATE = "coverage-pinned";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RecordLayout.VesselPane in;
    private final long latenessMs;
    private final long graceMs;
    private final long reachMs;
    private final long ttlMs;

    /** Hour start -> (mmsi -> reports). */
    private transient MapState<Long, Map<Long, Integer>> hours;
    /** Gap id and "open"/"closed" -> its record, waiting for its hours to be final. */
    private transient MapState<String, String> waiting;
    /** Open gap id -> {its start's hour, until when it pins}. */
    private transient MapState<String, long[]> pinned;

    public GapCoverage(RowTypeInfo contributionType, long latenessMs, long graceMs, long reachMs, long ttlMs) {
        this.in = new RecordLayout.VesselPane(contributionType);
        this.latenessMs = latenessMs;
        this.graceMs = graceMs;
        this.reachMs = reachMs;
        this.ttlMs = ttlMs;
    }

    @Override
    public void open(OpenContext openContext) {
        hours =
                getRuntimeContext()
                        .getMapState(new MapStateDescriptor<>(HOURS_STATE, Types.LONG, Types.MAP(Types.LONG, Types.INT)));
        waiting = getRuntimeContext().getMapState(new MapStateDescriptor<>(WAITING_STATE, Types.STRING, Types.STRING));
        @SuppressWarnings("unchecked")
        TypeInformation<long[]> longs = (TypeInformation<long[]>) Types.PRIMITIVE_ARRAY(Types.LONG);
        pinned = getRuntimeContext().getMapState(new MapStateDescriptor<>(PINNED_STATE, Types.STRING, longs));
    }

    static long hourOf(long ts) {
        return ts - Math.floorMod(ts, HOUR_MS);
    }

    long dueAt(long lastHour) {
        return lastHour + HOUR_MS - 1 + latenessMs + graceMs;
    }

    long keepFrom(long watermark) {
        return hourOf(watermark - latenessMs - graceMs - reachMs - HOUR_MS);
    }

    // -- inputs -------------------------------------------------------------------------------

    @Override
    public void processElement1(Row pane, Context ctx, Collector<String> out) throws Exception {
        int reports = (Integer) pane.getField(in.reports);
        if (reports == 0 || !(Boolean) pane.getField(in.tumbling)) {
            return;
        }
        long hour = hourOf((Long) pane.getField(in.paneStart));
        long mmsi = (Long) pane.getField(in.mmsi);
        Map<Long, Integer> bucket = hours.get(hour);
        boolean newHour = bucket == null;
        if (newHour) {
            bucket = new HashMap<>();
        }
        bucket.merge(mmsi, reports, Integer::sum);
        hours.put(hour, bucket);
        if (newHour) { // only a new hour can move the cell's next timer (its oldest hour to forget)
            arm(ctx.timerService());
        }
    }

    @Override
    public void processElement2(String record, Context ctx, Collector<String> out) throws Exception {
        Gap gap = Gap.of(record);
        if (gap.end == null) {
            pinned.put(gap.id, new long[] {gap.firstHour(), gap.start + ttlMs});
        }
        waiting.put(gap.id + (gap.end == null ? "|open" : "|closed"), record);
        arm(ctx.timerService());
    }

    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<String> out) throws Exception {
        advance(ctx.getCurrentKey(), ts, out);
        arm(ctx.timerService());
    }

    // -- the reference's advance and next_timer --------------------------------------------------

    private void advance(String cell, long watermark, Collector<String> out) throws Exception {
        List<Gap> due = new ArrayList<>();
        List<String> done = new ArrayList<>();
        for (Map.Entry<String, String> entry : waiting.entries()) {
            Gap gap = Gap.of(entry.getValue());
            if (dueAt(gap.lastHour()) <= watermark) {
                due.add(gap);
                done.add(entry.getKey());
            }
        }
        // An open gap before its closed self (a store that keeps the last record ends closed).
        due.sort((a, b) -> {
            int byDue = Long.compare(dueAt(a.lastHour()), dueAt(b.lastHour()));
            return byDue != 0 ? byDue : Boolean.compare(a.end != null, b.end != null);
        });
        for (Gap gap : due) {
            out.collect(gap.withCoverage(cell, count(gap.firstHour(), gap.lastHour(), gap.mmsi)));
            if (gap.end != null) {
                pinned.remove(gap.id);
            }
        }
        for (String key : done) {
            waiting.remove(key);
        }
        List<String> expired = new ArrayList<>();
        for (Map.Entry<String, long[]> pin : pinned.entries()) {
            if (pin.getValue()[1] <= watermark) {
                expired.add(pin.getKey());
            }
        }
        for (String id : expired) {
            pinned.remove(id);
        }
        long oldest = Math.min(keepFrom(watermark), held());
        List<Long> forgotten = new ArrayList<>();
        for (Long hour : hours.keys()) {
            if (hour < oldest) {
                forgotten.add(hour);
            }
        }
        for (Long hour : forgotten) {
            hours.remove(hour);
        }
    }

    /** The oldest hour a waiting or an open gap holds (Long.MAX_VALUE: none). */
    private long held() throws Exception {
        long oldest = Long.MAX_VALUE;
        for (String record : waiting.values()) {
            oldest = Math.min(oldest, Gap.of(record).firstHour());
        }
        for (long[] pin : pinned.values()) {
            oldest = Math.min(oldest, pin[0]);
        }
        return oldest;
    }

    /** A timer for the cell's next step: a gap due, a pin expiring, or its oldest hour to forget. */
    private void arm(org.apache.flink.streaming.api.TimerService timers) throws Exception {
        long next = Long.MAX_VALUE;
        for (String record : waiting.values()) {
            next = Math.min(next, dueAt(Gap.of(record).lastHour()));
        }
        for (long[] pin : pinned.values()) {
            next = Math.min(next, pin[1]);
        }
        long oldestHour = Long.MAX_VALUE;
        for (Long hour : hours.keys()) {
            oldestHour = Math.min(oldestHour, hour);
        }
        if (oldestHour != Long.MAX_VALUE && oldestHour < held()) {
            next = Math.min(next, oldestHour + 2 * HOUR_MS + latenessMs + graceMs + reachMs);
        }
        if (next != Long.MAX_VALUE) {
            timers.registerEventTimeTimer(next);
        }
    }

    private long[] count(long firstHour, long lastHour, long mmsi) throws Exception {
        long reports = 0;
        Set<Long> vessels = new HashSet<>();
        for (Map.Entry<Long, Map<Long, Integer>> entry : hours.entries()) {
            long hour = entry.getKey();
            if (hour < firstHour || hour > lastHour) {
                continue;
            }
            for (Map.Entry<Long, Integer> other : entry.getValue().entrySet()) {
                if (other.getKey() != mmsi) {
                    reports += other.getValue();
                    vessels.add(other.getKey());
                }
            }
        }
        return new long[] {reports, vessels.size()};
    }

    // -- gap records ------------------------------------------------------------------------------

    /** What the coverage needs of a gap's record (the reference's {@code GapHours}). */
    static final class Gap {
        final String record;
        final String id;
        final long mmsi;
        final long start;
        final Long end;
        final long revealedAt;
        final double startLat;
        final double startLon;

        private Gap(String record, JsonNode node) {
            this.record = record;
            this.id = node.get("id").asText();
            this.mmsi = node.get("mmsi").asLong();
            this.start = Instant.parse(node.get("start_time").asText()).toEpochMilli();
            JsonNode end = node.get("end_time");
            this.end = end == null || end.isNull() ? null : Instant.parse(end.asText()).toEpochMilli();
            this.revealedAt = Instant.parse(node.get("as_of").asText()).toEpochMilli();
            this.startLat = node.get("start_lat").asDouble();
            this.startLon = node.get("start_lon").asDouble();
        }

        static Gap of(String record) throws Exception {
            return new Gap(record, JSON.readTree(record));
        }

        long firstHour() {
            return hourOf(start);
        }

        long lastHour() {
            if (end != null) {
                return hourOf(end);
            }
            return Math.max(firstHour(), hourOf(revealedAt) - HOUR_MS);
        }

        /** The record with the coverage added at its end, as Python's json.dumps writes it. */
        String withCoverage(String cell, long[] counted) {
            String body = record.substring(0, record.lastIndexOf('}'));
            return body
                    + ",\"coverage_cell\":\""
                    + cell
                    + "\",\"coverage_reports\":"
                    + counted[0]
                    + ",\"coverage_vessels\":"
                    + counted[1]
                    + "}";
        }
    }

    // -- keys ---------------------------------------------------------------------------------------

    /**
     * The 1-degree cell of a point, as {@code ais_pipeline.rules.coverage.cell_of} names it: its
     * south-west corner, {@code N54E010}, {@code S09E060}.
     */
    static String cellOf(double lat, double lon) {
        long la = Math.min((long) Math.floor(lat), 89);
        long lo = (long) Math.floor(lon);
        if (lo >= 180) {
            lo = -180;
        }
        return String.format(
                "%s%02d%s%03d", la >= 0 ? "N" : "S", Math.abs(la), lo >= 0 ? "E" : "W", Math.abs(lo));
    }

    /** Keys pane contributions by the 1-degree cell of their geohash cell's centre. */
    public static final class PaneCell implements KeySelector<Row, String>, ResultTypeQueryable<String> {
        private static final long serialVersionUID = 1L;
        private final int cell;

        public PaneCell(RowTypeInfo contributionType) {
            this.cell = new RecordLayout.VesselPane(contributionType).cell;
        }

        @Override
        public String getKey(Row row) {
            double[] centre = Geohash.center((String) row.getField(cell));
            return cellOf(centre[0], centre[1]);
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    /** Keys gap records by the 1-degree cell of their start. */
    public static final class GapCell implements KeySelector<String, String>, ResultTypeQueryable<String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getKey(String record) throws Exception {
            Gap gap = Gap.of(record);
            return cellOf(gap.startLat, gap.startLon);
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }
}
