package ais.flink;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;

/**
 * The duplicate ratio of the dedup operator as a gauge: exact and near duplicates over all valid
 * position reports decided, read from the operator's own counters. PyFlink's Python gauges can
 * only report whole numbers (and call back into Python on the metrics thread); this one is a
 * ratio computed in Java.
 */
public final class DuplicateRatio implements Gauge<Double> {
    private Counter kept;
    private Counter exact;
    private Counter near;

    /** Made from Python with {@code Class.newInstance()}: pemja cannot pass constructor arguments. */
    public DuplicateRatio() {}

    public DuplicateRatio of(Counter kept, Counter exact, Counter near) {
        this.kept = kept;
        this.exact = exact;
        this.near = near;
        return this;
    }

    @Override
    public Double getValue() {
        if (kept == null) {
            return 0.0;
        }
        long dropped = exact.getCount() + near.getCount();
        long total = kept.getCount() + dropped;
        return total == 0 ? 0.0 : Math.round(dropped * 10000.0 / total) / 10000.0;
    }
}
