package ais.flink;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * One record per line of a multi-line string. The window operator emits all the aggregates of a
 * shard that fire together as one record (one Java/Python round trip instead of one per
 * aggregate); this turns them back into one record per aggregate, in Java.
 */
public final class SplitLines implements FlatMapFunction<String, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public void flatMap(String value, Collector<String> out) {
        int start = 0;
        int end;
        while ((end = value.indexOf('\n', start)) >= 0) {
            out.collect(value.substring(start, end));
            start = end + 1;
        }
        out.collect(value.substring(start));
    }
}
