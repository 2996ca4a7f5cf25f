package ais.flink;

import java.util.Arrays;

/**
 * What a cell holds for one pane, per window kind ({@code ais_pipeline.rules.windows.PaneAcc}):
 * a late contribution may count for one kind only. A Flink POJO (public fields, primitive
 * arrays), so keyed state stores it with Flink's own serializers.
 *
 * <p>Per kind ({@link Kind}): the reports and their speeds; the vessels heard, each as {@code mmsi *
 * CATEGORY_SLOTS + category} (a vessel whose static report came mid-window is heard in two
 * categories); and per category (an index into the job's list of categories) the reports and
 * the vessel time in milliseconds, as arrays that stay empty until something is added.
 */
public class Pane {
    static final long[] NONE = new long[0];
    static final int[] NO_INTS = new int[0];
    /** Categories a vessel entry can name: the low bits of {@code mmsi * CATEGORY_SLOTS + category}. */
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

    /** The tumbling windows' share of the pane. */
    public Kind t = new Kind();
    /** The sliding windows' share (late contributions apart, in {@link #sLate}). */
    public Kind s = new Kind();
    /**
     * Late contributions that count only in the sliding windows ending at or after {@code from}:
     * {@link #LATE_STRIDE} values each, flattened.
     */
    public long[] sLate = NONE;

    public Pane() {}

    void add(Contribution c, int categories) {
        if (c.tumbling) {
            t.add(c, categories);
        }
        if (c.sliding && c.slidingFrom != 0) {
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
        } else if (c.sliding) {
            s.add(c, categories);
        }
    }

    /** What one window kind holds of a pane (a Flink POJO too). */
    public static class Kind {
        public int reports;
        public long sogMilliSum;
        public int sogCount;
        public long[] vessels = NONE;
        public int[] typeReports = NO_INTS;
        public long[] typeMs = NONE;

        public Kind() {}

        void add(Contribution c, int categories) {
            if (c.reports != 0) {
                reports += c.reports;
                sogMilliSum += c.sogMilliSum;
                sogCount += c.sogCount;
                vessels = withVessel(vessels, c.mmsi * CATEGORY_SLOTS + c.category);
                typeReports = plus(typeReports, categories, c.category, c.reports);
            }
            if (c.vesselMs != 0) {
                typeMs = plus(typeMs, categories, c.category, c.vesselMs);
            }
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
        totals.add(s);
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
            for (long ms : kind.typeMs) {
                vesselMs += ms;
            }
            if (vessels != null) {
                vessels.addAll(kind.vessels);
                for (int i = 0; i < kind.typeReports.length; i++) {
                    typeReports[i] += kind.typeReports[i];
                }
                for (int i = 0; i < kind.typeMs.length; i++) {
                    typeMs[i] += kind.typeMs[i];
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

    private static int[] plus(int[] values, int size, int at, int n) {
        int[] out = values.length == 0 ? new int[size] : values;
        out[at] += n;
        return out;
    }

    private static long[] plus(long[] values, int size, int at, long n) {
        long[] out = values.length == 0 ? new long[size] : values;
        out[at] += n;
        return out;
    }
}
