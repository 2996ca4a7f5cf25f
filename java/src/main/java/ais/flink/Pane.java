package ais.flink;

import java.util.Arrays;

/**
 * What a cell holds for one pane, per window kind ({@code ais_pipeline.rules.windows.PaneAcc}):
 * a late report may count for one kind only. A Flink POJO (public fields, primitive arrays), so
 * keyed state stores it with Flink's own serializers.
 */
public class Pane {
    static final long[] NONE = new long[0];
    /** A late contribution in {@link #sLate}: (from, reports, sog milli sum, sog count, mmsi). */
    static final int LATE_STRIDE = 5;

    private static final int FROM = 0;
    private static final int REPORTS = 1;
    private static final int SOG_MILLI_SUM = 2;
    private static final int SOG_COUNT = 3;
    private static final int MMSI = 4;

    public int tReports;
    public long tSogMilliSum;
    public int tSogCount;
    public long[] tVessels = NONE;
    public int sReports;
    public long sSogMilliSum;
    public int sSogCount;
    public long[] sVessels = NONE;
    /**
     * Late reports that count only in the sliding windows ending at or after {@code from}:
     * {@link #LATE_STRIDE} values each, flattened.
     */
    public long[] sLate = NONE;

    public Pane() {}

    void add(Contribution c) {
        if (c.tumbling) {
            tReports += c.reports;
            tSogMilliSum += c.sogMilliSum;
            tSogCount += c.sogCount;
            tVessels = withVessel(tVessels, c.mmsi);
        }
        if (c.sliding && c.slidingFrom != 0) {
            int at = sLate.length;
            long[] late = Arrays.copyOf(sLate, at + LATE_STRIDE);
            late[at + FROM] = c.slidingFrom;
            late[at + REPORTS] = c.reports;
            late[at + SOG_MILLI_SUM] = c.sogMilliSum;
            late[at + SOG_COUNT] = c.sogCount;
            late[at + MMSI] = c.mmsi;
            sLate = late;
        } else if (c.sliding) {
            sReports += c.reports;
            sSogMilliSum += c.sogMilliSum;
            sSogCount += c.sogCount;
            sVessels = withVessel(sVessels, c.mmsi);
        }
    }

    /**
     * Adds what this pane holds for a window of one kind ending at {@code windowEnd} to
     * {@code totals}: the tumbling figures, or the sliding ones with the late contributions that
     * count from that window on.
     */
    void addTo(boolean tumbling, long windowEnd, Totals totals) {
        if (tumbling) {
            totals.add(tReports, tSogMilliSum, tSogCount, tVessels);
            return;
        }
        totals.add(sReports, sSogMilliSum, sSogCount, sVessels);
        for (int i = 0; i < sLate.length; i += LATE_STRIDE) {
            if (sLate[i + FROM] <= windowEnd) {
                totals.add(sLate[i + REPORTS], sLate[i + SOG_MILLI_SUM], sLate[i + SOG_COUNT], sLate[i + MMSI]);
            }
        }
    }

    /** What the panes of one window add up to; distinct vessels only when asked for. */
    static final class Totals {
        long reports;
        long sogMilliSum;
        long sogCount;
        final LongSet vessels;

        Totals(boolean countVessels) {
            vessels = countVessels ? new LongSet() : null;
        }

        void add(long moreReports, long moreSog, long moreSogCount, long[] mmsis) {
            reports += moreReports;
            sogMilliSum += moreSog;
            sogCount += moreSogCount;
            if (vessels != null) {
                vessels.addAll(mmsis);
            }
        }

        void add(long moreReports, long moreSog, long moreSogCount, long mmsi) {
            reports += moreReports;
            sogMilliSum += moreSog;
            sogCount += moreSogCount;
            if (vessels != null) {
                vessels.add(mmsi);
            }
        }
    }

    private static long[] withVessel(long[] vessels, long mmsi) {
        for (long v : vessels) {
            if (v == mmsi) {
                return vessels;
            }
        }
        long[] more = Arrays.copyOf(vessels, vessels.length + 1);
        more[vessels.length] = mmsi;
        return more;
    }
}
