package ais.flink;

import java.util.Arrays;

/**
 * What a cell holds for one pane, per window kind ({@code ais_pipeline.rules.windows.PaneAcc}):
 * a late contribution may count for one kind only. A Flink POJO (public fields, primitive
 * arrays), so keyed state stores it with Flink's own serializers; laid out to be small, since a
 * cell holds a pane for every minute a window can still use.
 *
 * <p>Per kind ({@link Kind}): the reports and their speeds; the vessels heard, each as {@code mmsi *
 * CATEGORY_SLOTS + category} (a vessel whose static report came mid-window is heard in two
 * categories); and, for each category with something in the pane, its reports and vessel time
 * in milliseconds. Until a contribution counts for one kind and not the other, both kinds hold
 * the same: {@link #s} is then null and {@link #t} stands for both.
 */
public class Pane {
    static final long[] NONE = new long[0];
    /** Categories a vessel or type entry can name: the low bits of {@code mmsi * CATEGORY_SLOTS + category}. */
    static final int CATEGORY_SLOTS = 16;
    /** A late contribution in {@link #sLate}: (from, reports, sog milli sum, sog count, mmsi, category, ms). */
    static final int LATE_STRIDE = 7;

    private static final int FROM = 0;
    private static final int REPORTS = 1;
    private static final int SOG_MILLI_SUM = 2;
    private static final int SOG_COUNT = 3;
    private static final int MMSI = 4;
    private static final int CATEGORY = 5;
    private static final int MS = 6;

    /** The tumbling windows' share of the pane; the sliding windows' too while {@link #s} is null. */
    public Kind t = new Kind();
    /** The sliding windows' share (late contributions apart, in {@link #sLate}), once it differs from {@link #t}. */
    public Kind s;
    /**
     * Late contributions that count only in the sliding windows ending at or after {@code from}:
     * {@link #LATE_STRIDE} values each, flattened.
     */
    public long[] sLate = NONE;

    public Pane() {}

    void add(Contribution c) {
        boolean slidingLate = c.sliding && c.slidingFrom != 0;
        boolean both = c.tumbling && c.sliding && !slidingLate;
        if (s == null && !both && (c.tumbling || c.sliding)) {
            s = t.copy(); // from now on the kinds differ
        }
        if (c.tumbling) {
            t.add(c);
        }
        if (slidingLate) {
            int at = sLate.length;
            long[] late = Arrays.copyOf(sLate, at + LATE_STRIDE);
            late[at + FROM] = c.slidingFrom;
            late[at + REPORTS] = c.reports;
            late[at + SOG_MILLI_SUM] = c.sogMilliSum;
            late[at + SOG_COUNT] = c.sogCount;
            late[at + MMSI] = c.mmsi;
            late[at + CATEGORY] = c.category;
            late[at + MS] = c.vesselMs;
            sLate = late;
        } else if (c.sliding && s != null) {
            s.add(c);
        }
    }

    /** The sliding windows' share (without the late contributions). */
    Kind sliding() {
        return s == null ? t : s;
    }

    /**
     * What one window kind holds of a pane (a Flink POJO too). {@link #types}: for each category
     * with reports or time in the pane, two values: {@code reports * CATEGORY_SLOTS + category}
     * and the milliseconds.
     */
    public static class Kind {
        public int reports;
        public long sogMilliSum;
        public int sogCount;
        public long[] vessels = NONE;
        public long[] types = NONE;

        public Kind() {}

        Kind copy() {
            Kind k = new Kind();
            k.reports = reports;
            k.sogMilliSum = sogMilliSum;
            k.sogCount = sogCount;
            k.vessels = vessels.clone();
            k.types = types.clone();
            return k;
        }

        void add(Contribution c) {
            if (c.reports == 0 && c.vesselMs == 0) {
                return;
            }
            if (c.reports != 0) {
                reports += c.reports;
                sogMilliSum += c.sogMilliSum;
                sogCount += c.sogCount;
                vessels = withVessel(vessels, c.mmsi * CATEGORY_SLOTS + c.category);
            }
            int at = 0;
            while (at < types.length && types[at] % CATEGORY_SLOTS != c.category) {
                at += 2;
            }
            if (at == types.length) {
                types = Arrays.copyOf(types, at + 2);
                types[at] = c.category;
            }
            types[at] += (long) c.reports * CATEGORY_SLOTS;
            types[at + 1] += c.vesselMs;
        }
    }

    /**
     * Adds what this pane holds for a window of one kind ending at {@code windowEnd} to
     * {@code totals}: the tumbling figures, or the sliding ones with the late contributions that
     * count from that window on.
     */
    void addTo(boolean tumbling, long windowEnd, Totals totals) {
        if (tumbling) {
            totals.add(t);
            return;
        }
        totals.add(sliding());
        for (int i = 0; i < sLate.length; i += LATE_STRIDE) {
            if (sLate[i + FROM] <= windowEnd) {
                totals.addOne(
                        sLate[i + REPORTS],
                        sLate[i + SOG_MILLI_SUM],
                        sLate[i + SOG_COUNT],
                        sLate[i + MMSI],
                        (int) sLate[i + CATEGORY],
                        sLate[i + MS]);
            }
        }
    }

    /** What the panes of one window add up to; vessels and the per-category figures only when asked for. */
    static final class Totals {
        long reports;
        long sogMilliSum;
        long sogCount;
        long vesselMs;
        /** Vessel entries ({@code mmsi * CATEGORY_SLOTS + category}), distinct. */
        final LongSet vessels;
        final long[] typeReports;
        final long[] typeMs;

        /** No report and no time: a window that does not fire. */
        boolean empty() {
            return reports == 0 && vesselMs == 0;
        }

        Totals(boolean detail, int categories) {
            vessels = detail ? new LongSet() : null;
            typeReports = detail ? new long[categories] : null;
            typeMs = detail ? new long[categories] : null;
        }

        void add(Kind kind) {
            reports += kind.reports;
            sogMilliSum += kind.sogMilliSum;
            sogCount += kind.sogCount;
            long[] types = kind.types;
            for (int i = 0; i < types.length; i += 2) {
                vesselMs += types[i + 1];
            }
            if (vessels != null) {
                vessels.addAll(kind.vessels);
                for (int i = 0; i < types.length; i += 2) {
                    int category = (int) (types[i] % CATEGORY_SLOTS);
                    typeReports[category] += types[i] / CATEGORY_SLOTS;
                    typeMs[category] += types[i + 1];
                }
            }
        }

        void addOne(long moreReports, long moreSog, long moreSogCount, long mmsi, int category, long ms) {
            reports += moreReports;
            sogMilliSum += moreSog;
            sogCount += moreSogCount;
            vesselMs += ms;
            if (vessels != null) {
                if (moreReports != 0) {
                    vessels.add(mmsi * CATEGORY_SLOTS + category);
                }
                typeReports[category] += moreReports;
                typeMs[category] += ms;
            }
        }
    }

    private static long[] withVessel(long[] vessels, long entry) {
        for (long v : vessels) {
            if (v == entry) {
                return vessels;
            }
        }
        long[] more = Arrays.copyOf(vessels, vessels.length + 1);
        more[vessels.length] = entry;
        return more;
    }
}
