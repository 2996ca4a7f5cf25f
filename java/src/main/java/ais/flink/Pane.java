package ais.flink;

import java.util.Arrays;

/**
 * What a cell holds for one pane, per window kind ({@code ais_pipeline.rules.windows.PaneAcc}):
 * a late report may count for one kind only. A Flink POJO (public fields, primitive arrays), so
 * keyed state stores it with Flink's own serializers.
 */
public class Pane {
    static final long[] NONE = new long[0];

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
     * flattened (from, reports, sog milli sum, sog count, mmsi) quintuples.
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
            long[] late = Arrays.copyOf(sLate, sLate.length + 5);
            late[sLate.length] = c.slidingFrom;
            late[sLate.length + 1] = c.reports;
            late[sLate.length + 2] = c.sogMilliSum;
            late[sLate.length + 3] = c.sogCount;
            late[sLate.length + 4] = c.mmsi;
            sLate = late;
        } else if (c.sliding) {
            sReports += c.reports;
            sSogMilliSum += c.sogMilliSum;
            sSogCount += c.sogCount;
            sVessels = withVessel(sVessels, c.mmsi);
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
