package ais.flink;

import java.util.Map;

import org.apache.flink.types.Row;

/**
 * One vessel's contribution to one cell in one pane ({@code ais_pipeline.rules.records.VesselPane},
 * decided by the Python dedup operator): a kept report, or time the vessel spent in the cell
 * ({@code vesselMs}); read from the row by field name ({@link RecordLayout}), its category as
 * an index into the job's list of categories.
 */
final class Contribution {
    final String cell;
    final long paneStart;
    final long mmsi;
    final int reports;
    final long sogMilliSum;
    final int sogCount;
    final boolean tumbling;
    final boolean sliding;
    final long slidingFrom;
    final long vesselMs;
    final int category;

    Contribution(
            String cell,
            long paneStart,
            long mmsi,
            int reports,
            long sogMilliSum,
            int sogCount,
            boolean tumbling,
            boolean sliding,
            long slidingFrom,
            long vesselMs,
            int category) {
        this.cell = cell;
        this.paneStart = paneStart;
        this.mmsi = mmsi;
        this.reports = reports;
        this.sogMilliSum = sogMilliSum;
        this.sogCount = sogCount;
        this.tumbling = tumbling;
        this.sliding = sliding;
        this.slidingFrom = slidingFrom;
        this.vesselMs = vesselMs;
        this.category = category;
    }

    static Contribution of(Row row, RecordLayout.VesselPane f, Map<String, Integer> categories) {
        String name = (String) row.getField(f.category);
        Integer category = categories.get(name);
        if (category == null) {
            throw new IllegalArgumentException("a contribution of category '" + name + "', not one of " + categories.keySet());
        }
        return new Contribution(
                (String) row.getField(f.cell),
                ((Number) row.getField(f.paneStart)).longValue(),
                ((Number) row.getField(f.mmsi)).longValue(),
                ((Number) row.getField(f.reports)).intValue(),
                ((Number) row.getField(f.sogMilliSum)).longValue(),
                ((Number) row.getField(f.sogCount)).intValue(),
                (Boolean) row.getField(f.tumbling),
                (Boolean) row.getField(f.sliding),
                ((Number) row.getField(f.slidingFrom)).longValue(),
                ((Number) row.getField(f.vesselMs)).longValue(),
                category);
    }
}
