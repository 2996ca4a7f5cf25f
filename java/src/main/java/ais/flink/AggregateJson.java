package ais.flink;

import java.math.BigDecimal;
import java.math.RoundingMode;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;

/**
 * An {@code Aggregate} row as its JSON line, the text {@code ais_pipeline.rules.outputs.aggregate_json}
 * gives (the same fields in the same order, times as ISO 8601 UTC with milliseconds,
 * {@code avg_sog} as Python prints a float rounded to 3 decimals, null when no report had one).
 */
public final class AggregateJson implements MapFunction<Row, String> {
    private static final long serialVersionUID = 1L;

    private final RecordLayout.Aggregate f;

    public AggregateJson(RowTypeInfo aggregateType) {
        this.f = new RecordLayout.Aggregate(aggregateType);
    }

    @Override
    public String map(Row agg) {
        return format(agg, f);
    }

    static String format(Row agg, RecordLayout.Aggregate f) {
        StringBuilder sb = new StringBuilder(192);
        sb.append("{\"window\":\"").append((String) agg.getField(f.window));
        sb.append("\",\"cell\":\"").append((String) agg.getField(f.cell));
        sb.append("\",\"window_start\":\"");
        IsoTime.append(sb, (Long) agg.getField(f.windowStart));
        sb.append("\",\"window_end\":\"");
        IsoTime.append(sb, (Long) agg.getField(f.windowEnd));
        sb.append("\",\"reports\":").append((int) (Integer) agg.getField(f.reports));
        sb.append(",\"vessels\":").append((int) (Integer) agg.getField(f.vessels));
        sb.append(",\"avg_sog\":");
        Double avg = (Double) agg.getField(f.avgSog);
        sb.append(avg == null ? "null" : pythonFloat3(avg));
        sb.append(",\"revision\":").append((int) (Integer) agg.getField(f.revision)).append('}');
        return sb.toString();
    }

    /** A float already rounded to 3 decimals as Python's {@code repr} prints it ("10.2", "0.0"). */
    static String pythonFloat3(double value) {
        String text = new BigDecimal(value).setScale(3, RoundingMode.HALF_EVEN).stripTrailingZeros().toPlainString();
        return text.indexOf('.') < 0 ? text + ".0" : text;
    }

    /** The Kafka key of an aggregate: window, cell and window start (ISO), joined by {@code |}. */
    static String key(Row agg, RecordLayout.Aggregate f) {
        StringBuilder sb = new StringBuilder(48);
        sb.append((String) agg.getField(f.window)).append('|').append((String) agg.getField(f.cell)).append('|');
        IsoTime.append(sb, (Long) agg.getField(f.windowStart));
        return sb.toString();
    }
}
