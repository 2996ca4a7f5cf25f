package ais.flink;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * Tumbling and sliding aggregates of one geohash cell, keyed by cell, on Flink's keyed state and
 * event-time timers: the logic of {@code ais_pipeline.rules.windows.CellWindows} (the reference,
 * which the plain loop runs; {@code tests/golden/windows.json} holds cases both must pass).
 *
 * <p>Input: {@code VesselPane} rows (a vessel's contribution to a cell and pane: a kept report,
 * or time spent there; the dedup operator has decided for which window kinds it is on time).
 * Output: {@code Aggregate} rows, with the vessel hours and the per-category breakdown.
 *
 * <ul>
 *   <li>Panes of {@code gcd(tumbling size, slide)}: a contribution updates one pane of its cell;
 *       a sliding window is the sum of its panes when it fires.
 *   <li>A window fires when the watermark passes its end (a timer per cell on each pane boundary
 *       while the cell's newest pane is in a window not yet fired), as revision 0, and leaves no
 *       revision in state. A contribution that arrives once the watermark has passed a window's
 *       end, but not its end plus the allowed lateness, fires that window again at once with the
 *       next revision (a window without a stored revision has revision 0 exactly when it had
 *       content before).
 *   <li>A pane is dropped once every window containing it is closed (a timer per pane), and a
 *       revision once its window is closed: a cell whose windows have all closed holds no state
 *       and no timers.
 *   <li>The watermark this operator judges contributions against is never below the highest one
 *       it has seen before a checkpoint (kept in operator state): an operator's watermark starts
 *       from nothing after a restore, and a late contribution for a window that fired before it
 *       would otherwise not fire it again.
 * </ul>
 */
public final class CellWindows extends KeyedProcessFunction<String, Row, Row>
        implements CheckpointedFunction, ResultTypeQueryable<Row> {
    private static final long serialVersionUID = 1L;

    public static final String TUMBLING = "tumbling";
    public static final String SLIDING = "sliding";
    /**
     * The panes' map state: a new name whenever {@link Pane}'s layout changes, so that a savepoint
     * of another layout restores without it (the windows start empty) instead of being misread.
     */
    static final String PANES_STATE = "panes-v3";
    /** The windows' revisions: (window start, kind) -> the highest revision fired (see {@link #revisionKey}). */
    static final String REVISIONS_STATE = "revisions";
    /**
     * The cell's pane starts, sorted, beside the panes' map state; and how many revisions the
     * cell holds. With them a timer reads the panes it needs by key and skips the revisions when
     * there are none, instead of iterating map state: on RocksDB an iteration seeks over every
     * entry the cell ever deleted that compaction has not yet dropped, which made the timers of a
     * cell alive for hours cost more with every pane. Absent (a savepoint of an earlier version),
     * each is built once from the map state.
     */
    static final String PANE_STARTS_STATE = "pane-starts";

    static final String REVISIONS_HELD_STATE = "revisions-held";

    private final WindowSpec spec;
    private final RecordLayout.VesselPane in;
    private final RowTypeInfo outType;
    private final RecordLayout.Aggregate out;
    private final String[] categories;
    private final Map<String, Integer> categoryIndex = new HashMap<>();

    private transient MapState<Long, Pane> panes;
    private transient MapState<Long, Integer> revisions;
    private transient ValueState<long[]> paneStarts;
    private transient ValueState<Integer> revisionsHeld;
    private transient ListState<Long> seenState;
    private transient long seen;
    /** The cells of this subtask with panes: the {@code cells_held} gauge. */
    transient volatile long cellsHeld;

    /**
     * @param categories the ship type categories, comma-separated, in the order aggregates list
     *     them ({@code ais_pipeline.rules.vessel_hours.ALL_CATEGORIES})
     */
    public CellWindows(WindowSpec spec, RowTypeInfo contributionType, RowTypeInfo aggregateType, String categories) {
        this.spec = spec;
        this.in = new RecordLayout.VesselPane(contributionType);
        this.outType = aggregateType;
        this.out = new RecordLayout.Aggregate(aggregateType);
        this.categories = categories.split(",");
        if (this.categories.length > Pane.CATEGORY_SLOTS) {
            throw new IllegalArgumentException("at most " + Pane.CATEGORY_SLOTS + " categories, not " + categories);
        }
        for (int i = 0; i < this.categories.length; i++) {
            categoryIndex.put(this.categories[i], i);
        }
    }

    @Override
    public void open(OpenContext openContext) {
        panes =
                getRuntimeContext()
                        .getMapState(new MapStateDescriptor<>(PANES_STATE, Types.LONG, TypeInformation.of(Pane.class)));
        revisions =
                getRuntimeContext().getMapState(new MapStateDescriptor<>(REVISIONS_STATE, Types.LONG, Types.INT));
        paneStarts = getRuntimeContext().getState(paneStartsDescriptor());
        revisionsHeld = getRuntimeContext().getState(new ValueStateDescriptor<>(REVISIONS_HELD_STATE, Types.INT));
        getRuntimeContext().getMetricGroup().gauge("cells_held", (Gauge<Long>) () -> cellsHeld);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        seenState =
                context.getOperatorStateStore()
                        .getUnionListState(new ListStateDescriptor<>("watermark-seen", Types.LONG));
        seen = Long.MIN_VALUE;
        for (Long restored : seenState.get()) {
            seen = Math.max(seen, restored);
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        seenState.update(Collections.singletonList(seen));
    }

    /** The operator to run this function with: it tells the function every watermark it gets. */
    public Operator operator() {
        return new Operator(this);
    }

    void watermark(long watermark) {
        seen = Math.max(seen, watermark);
    }

    /**
     * Flink's keyed process operator, telling the function each watermark before its timers fire,
     * so that the watermark it keeps in checkpoints is the operator's own.
     */
    public static final class Operator extends KeyedProcessOperator<String, Row, Row> {
        private static final long serialVersionUID = 1L;

        Operator(CellWindows windows) {
            super(windows);
        }

        @Override
        public void processWatermark(Watermark mark) throws Exception {
            ((CellWindows) userFunction).watermark(mark.getTimestamp());
            super.processWatermark(mark);
        }

        /** A restored subtask counts the cells its key groups hold (the gauge goes on from there). */
        @Override
        public void initializeState(StateInitializationContext context) throws Exception {
            super.initializeState(context);
            if (context.isRestored()) {
                KeyedStateBackend<String> backend = getKeyedStateBackend();
                backend.getOrCreateKeyedState(VoidNamespaceSerializer.INSTANCE, paneStartsDescriptor()); // registered first
                try (Stream<String> cells = backend.getKeys(PANE_STARTS_STATE, VoidNamespace.INSTANCE)) {
                    ((CellWindows) userFunction).cellsHeld = cells.count();
                }
            }
        }
    }

    static ValueStateDescriptor<long[]> paneStartsDescriptor() {
        return new ValueStateDescriptor<>(PANE_STARTS_STATE, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    @Override
    public TypeInformation<Row> getProducedType() {
        return outType;
    }

    // -- contributions ----------------------------------------------------------------------

    @Override
    public void processElement(Row row, Context ctx, Collector<Row> collector) throws Exception {
        TimerService timers = ctx.timerService();
        seen = Math.max(seen, timers.currentWatermark());
        Contribution c = Contribution.of(row, in, categoryIndex);
        long watermark = seen;
        long ps = c.paneStart;

        List<long[]> due = null; // (kind: 0 tumbling / 1 sliding, start, end)
        if (c.tumbling && spec.tumbling) {
            long end = spec.tumblingEnd(ps);
            if (isDue(end, watermark)) {
                due = new ArrayList<>(2);
                due.add(new long[] {0, end - spec.windowMs, end});
            }
        }
        if (c.sliding && spec.sliding) {
            for (long end = spec.firstSlidingEnd(ps); end <= spec.lastSlidingEnd(ps); end += spec.slideMs) {
                if (end >= c.slidingFrom && isDue(end, watermark)) {
                    if (due == null) {
                        due = new ArrayList<>(4);
                    }
                    due.add(new long[] {1, end - spec.slideSizeMs, end});
                }
            }
        }
        Pane acc = panes.get(ps);
        boolean fresh = acc == null;
        List<Map.Entry<Long, Pane>> sorted = null;
        boolean[] firedBefore = null;
        if (due != null) { // a late contribution: which of its windows had content (and so fired) before it
            sorted = sortedPanes();
            firedBefore = new boolean[due.size()];
            for (int i = 0; i < due.size(); i++) {
                long[] w = due.get(i);
                firedBefore[i] = !totals(w[0] == 0, w[1], w[2], sorted, false).empty();
            }
        }
        if (fresh) {
            acc = new Pane();
            long boundary = firstBoundaryAfter(ps, watermark);
            if (boundary <= spec.lastEnd(ps)) {
                timers.registerEventTimeTimer(boundary - 1);
            }
            timers.registerEventTimeTimer(spec.paneRetiredAt(ps));
        }
        acc.add(c);
        panes.put(ps, acc);
        if (fresh) {
            addPaneStart(ps);
        }
        if (due != null) {
            List<Map.Entry<Long, Pane>> after = withPane(sorted, ps, acc);
            for (int i = 0; i < due.size(); i++) {
                long[] w = due.get(i);
                fireLate(w[0] == 0, c.cell, w[1], w[2], firedBefore[i], after, collector);
            }
        }
    }

    /** {@code sorted} with the pane at {@code ps} as it is now (added in order when new). */
    private static List<Map.Entry<Long, Pane>> withPane(List<Map.Entry<Long, Pane>> sorted, long ps, Pane acc) {
        List<Map.Entry<Long, Pane>> out = new ArrayList<>(sorted.size() + 1);
        boolean placed = false;
        for (Map.Entry<Long, Pane> entry : sorted) {
            long p = entry.getKey();
            if (!placed && p >= ps) {
                out.add(new AbstractMap.SimpleImmutableEntry<>(ps, acc));
                placed = true;
                if (p == ps) {
                    continue;
                }
            }
            out.add(entry);
        }
        if (!placed) {
            out.add(new AbstractMap.SimpleImmutableEntry<>(ps, acc));
        }
        return out;
    }

    private boolean isDue(long end, long watermark) {
        return end - 1 <= watermark && !spec.closed(end, watermark);
    }

    /** The first window end of the pane that the watermark has not reached, or later. */
    private long firstBoundaryAfter(long paneStart, long watermark) {
        long boundary = paneStart + spec.paneMs;
        if (boundary - 1 <= watermark) {
            boundary = (watermark + 1) - Math.floorMod(watermark + 1, spec.paneMs) + spec.paneMs;
        }
        return boundary;
    }

    private void fireLate(
            boolean tumbling,
            String cell,
            long start,
            long end,
            boolean firedBefore,
            List<Map.Entry<Long, Pane>> sorted,
            Collector<Row> collector)
            throws Exception {
        long key = revisionKey(tumbling, start);
        Integer stored = revisions.get(key);
        Integer previous = stored;
        if (previous == null && firedBefore) {
            previous = 0;
        }
        int revision = previous == null ? 0 : previous + 1;
        Row agg = aggregate(tumbling, cell, start, end, sorted, revision);
        if (agg != null) {
            revisions.put(key, revision);
            Integer held = revisionsHeld.value();
            if (stored == null && held != null) {
                revisionsHeld.update(held + 1);
            }
            collector.collect(agg);
        }
    }

    // -- timers -------------------------------------------------------------------------------

    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<Row> collector) throws Exception {
        String cell = ctx.getCurrentKey();
        long boundary = ts + 1;
        List<Map.Entry<Long, Pane>> sorted = sortedPanes();
        if (sorted.isEmpty()) {
            return;
        }
        boolean onBoundary = Math.floorMod(boundary, spec.paneMs) == 0;
        if (onBoundary) {
            if (spec.tumbling && Math.floorMod(boundary, spec.windowMs) == 0) {
                fireOnTime(true, cell, boundary - spec.windowMs, boundary, sorted, collector);
            }
            if (spec.sliding && Math.floorMod(boundary, spec.slideMs) == 0) {
                fireOnTime(false, cell, boundary - spec.slideSizeMs, boundary, sorted, collector);
            }
        }
        // Panes come oldest first, and a newer pane never retires before an older one. Revisions
        // go with them: a window closes before the last of its panes retires.
        int retired = 0;
        for (Map.Entry<Long, Pane> pane : sorted) {
            if (spec.paneRetiredAt(pane.getKey()) > ts) {
                break;
            }
            panes.remove(pane.getKey());
            retired++;
        }
        if (retired > 0) {
            dropClosed(ts);
            if (retired == sorted.size()) { // the cell holds nothing more (its revisions went first)
                paneStarts.clear();
                revisionsHeld.clear();
                cellsHeld--;
            } else {
                long[] left = new long[sorted.size() - retired];
                for (int i = 0; i < left.length; i++) {
                    left[i] = sorted.get(retired + i).getKey();
                }
                paneStarts.update(left);
            }
        }
        // Chain the next end of a window that holds a pane: windows end only on boundaries, and
        // one without a pane fires nothing, so a cell whose panes lie years apart (a clock off
        // before the watermark starts) skips the years between them.
        if (onBoundary) {
            long next = Long.MAX_VALUE;
            for (Map.Entry<Long, Pane> pane : sorted) {
                next = Math.min(next, spec.nextEndAfter(pane.getKey(), boundary));
            }
            if (next != Long.MAX_VALUE) {
                ctx.timerService().registerEventTimeTimer(next - 1);
            }
        }
    }

    private void fireOnTime(
            boolean tumbling,
            String cell,
            long start,
            long end,
            List<Map.Entry<Long, Pane>> sorted,
            Collector<Row> collector)
            throws Exception {
        // Revision 0 leaves no trace in state. A window a late contribution already fired (it
        // came before this timer) has a stored revision.
        if (!hasPaneIn(start, end, sorted)) {
            return;
        }
        if (revisions.contains(revisionKey(tumbling, start))) {
            return;
        }
        Row agg = aggregate(tumbling, cell, start, end, sorted, 0);
        if (agg != null) {
            collector.collect(agg);
        }
    }

    /** The key of a window's revision: its start, and its kind in the lowest bit. */
    static long revisionKey(boolean tumbling, long start) {
        return start * 2 + (tumbling ? 0 : 1);
    }

    private void dropClosed(long watermark) throws Exception {
        Integer held = revisionsHeld.value();
        if (held != null && held == 0) {
            return;
        }
        int kept = 0;
        List<Long> closed = null;
        for (Long key : revisions.keys()) {
            kept++;
            long start = Math.floorDiv(key, 2L);
            long size = Math.floorMod(key, 2L) == 0 ? spec.windowMs : spec.slideSizeMs;
            if (spec.closed(start + size, watermark)) {
                if (closed == null) {
                    closed = new ArrayList<>();
                }
                closed.add(key);
            }
        }
        if (closed != null) {
            for (Long key : closed) {
                revisions.remove(key);
            }
            kept -= closed.size();
        }
        revisionsHeld.update(kept);
    }

    // -- aggregates ---------------------------------------------------------------------------

    private List<Map.Entry<Long, Pane>> sortedPanes() throws Exception {
        long[] starts = paneStarts.value();
        List<Map.Entry<Long, Pane>> sorted = new ArrayList<>(starts == null ? 4 : starts.length);
        if (starts != null) {
            for (long start : starts) {
                sorted.add(new AbstractMap.SimpleImmutableEntry<>(start, panes.get(start)));
            }
            return sorted;
        }
        for (Map.Entry<Long, Pane> entry : panes.entries()) { // state of an earlier version: built once
            sorted.add(new AbstractMap.SimpleImmutableEntry<>(entry.getKey(), entry.getValue()));
        }
        if (sorted.size() > 1) {
            sorted.sort(Map.Entry.comparingByKey());
        }
        if (!sorted.isEmpty()) {
            long[] built = new long[sorted.size()];
            for (int i = 0; i < built.length; i++) {
                built[i] = sorted.get(i).getKey();
            }
            paneStarts.update(built);
            cellsHeld++;
        }
        return sorted;
    }

    /** A new pane's start into the sorted starts. */
    private void addPaneStart(long ps) throws Exception {
        long[] starts = paneStarts.value();
        if (starts == null) {
            sortedPanes(); // built from the map state, which holds the new pane already
            return;
        }
        int at = Arrays.binarySearch(starts, ps);
        if (at >= 0) {
            return;
        }
        int insert = -at - 1;
        long[] grown = new long[starts.length + 1];
        System.arraycopy(starts, 0, grown, 0, insert);
        grown[insert] = ps;
        System.arraycopy(starts, insert, grown, insert + 1, starts.length - insert);
        paneStarts.update(grown);
    }

    private static boolean hasPaneIn(long start, long end, List<Map.Entry<Long, Pane>> sorted) {
        for (Map.Entry<Long, Pane> pane : sorted) {
            long p = pane.getKey();
            if (p >= start && p < end) {
                return true;
            }
        }
        return false;
    }

    /** What the panes of {@code sorted} in [start, end) hold for a window of one kind. */
    private Pane.Totals totals(
            boolean tumbling, long start, long end, List<Map.Entry<Long, Pane>> sorted, boolean detail) {
        Pane.Totals totals = new Pane.Totals(detail, categories.length);
        for (Map.Entry<Long, Pane> entry : sorted) {
            long p = entry.getKey();
            if (p >= start && p < end) {
                entry.getValue().addTo(tumbling, end, totals);
            }
        }
        return totals;
    }

    /** The aggregate of one window over its panes, or null when it holds no report and no time. */
    Row aggregate(boolean tumbling, String cell, long start, long end, List<Map.Entry<Long, Pane>> sorted, int revision) {
        Pane.Totals totals = totals(tumbling, start, end, sorted, true);
        long reports = totals.reports;
        if (totals.empty()) {
            return null;
        }
        LongSet mmsis = new LongSet();
        int[] typeVessels = new int[categories.length];
        for (int i = 0; i < totals.vessels.size(); i++) {
            long entry = totals.vessels.get(i);
            mmsis.add(Math.floorDiv(entry, Pane.CATEGORY_SLOTS));
            typeVessels[(int) Math.floorMod(entry, Pane.CATEGORY_SLOTS)]++;
        }
        List<Integer> shown = new ArrayList<>();
        for (int i = 0; i < categories.length; i++) {
            if (totals.typeReports[i] != 0 || totals.typeMs[i] != 0) {
                shown.add(i);
            }
        }
        String[] names = new String[shown.size()];
        Integer[] vessels = new Integer[shown.size()];
        Integer[] reportsByType = new Integer[shown.size()];
        Double[] hoursByType = new Double[shown.size()];
        for (int j = 0; j < shown.size(); j++) {
            int i = shown.get(j);
            names[j] = categories[i];
            vessels[j] = typeVessels[i];
            reportsByType[j] = (int) totals.typeReports[i];
            hoursByType[j] = hours(totals.typeMs[i]);
        }
        Row agg = new Row(out.arity);
        agg.setField(out.window, tumbling ? TUMBLING : SLIDING);
        agg.setField(out.cell, cell);
        agg.setField(out.windowStart, start);
        agg.setField(out.windowEnd, end);
        agg.setField(out.reports, (int) reports);
        agg.setField(out.vessels, mmsis.size());
        agg.setField(out.avgSog, totals.sogCount == 0 ? null : averageSog(totals.sogMilliSum, totals.sogCount));
        agg.setField(out.revision, revision);
        agg.setField(out.vesselHours, hours(totals.vesselMs));
        agg.setField(out.typeNames, names);
        agg.setField(out.typeVessels, vessels);
        agg.setField(out.typeReports, reportsByType);
        agg.setField(out.typeHours, hoursByType);
        agg.setField(out.sogSum, (double) totals.sogMilliSum / 1000.0);
        agg.setField(out.sogReports, (int) totals.sogCount);
        return agg;
    }

    /**
     * Milliseconds as hours, rounded to 6 decimals as Python's {@code round(ms / 3600000, 6)}: in
     * millionths of an hour the time is {@code ms * 5 / 18}, so only a remainder of exactly one
     * half (a tie, decided by the double's own digits) needs the double's exact decimal value.
     */
    static double hours(long ms) {
        long fives = ms * 5;
        long millionths = Math.floorDiv(fives, 18L);
        long rest = Math.floorMod(fives, 18L);
        if (rest == 9 || Math.abs(ms) > (1L << 42)) { // a tie, or beyond a million hours
            double h = (double) ms / 3_600_000.0;
            return new java.math.BigDecimal(h).setScale(6, java.math.RoundingMode.HALF_EVEN).doubleValue();
        }
        return (rest > 9 ? millionths + 1 : millionths) / 1e6;
    }

    /**
     * Mean SOG in knots, rounded to 3 decimals as Python's {@code round(sum / n / 1000, 3)}: the
     * same double, rounded at once unless it lies so near a half thousandth that only its exact
     * decimal value can tell.
     */
    static double averageSog(long sogMilliSum, long count) {
        double mean = (double) sogMilliSum / (double) count / 1000.0;
        double scaled = mean * 1000.0;
        double floor = Math.floor(scaled);
        double fraction = scaled - floor;
        if (Math.abs(fraction - 0.5) > 1e-6 && Math.abs(scaled) < 1e6) {
            return (fraction > 0.5 ? floor + 1 : floor) / 1000.0;
        }
        return new java.math.BigDecimal(mean).setScale(3, java.math.RoundingMode.HALF_EVEN).doubleValue();
    }
}
