package ais.flink;

import java.math.BigDecimal;
import java.math.RoundingMode;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;

/**
 * An {@code Aggregate} row as its JSON line, the text {@code ais_pipeline.rules.outputs.aggregate_json}
 * gives (the same fields in the same order: the window's kind, size, slide (a tumbling window's
 * is its size) and geohash precision, which together with the cell and the start are what a store
 * merges an aggregate on; times as ISO 8601 UTC with milliseconds,
 * {@code avg_sog} as Python prints a float rounded to 3 decimals, null when no report had one;
 * {@code sog_sum}, the reports' SOG added up (thousandths, exact), and {@code sog_reports};
 * {@code vessel_hours} rounded to 6, and {@code by_type}, an object of one entry per category).
 */
public final class AggregateJson implements MapFunction<Row, String> {
    private static final long serialVersionUID = 1L;

    private final RecordLayout.Aggregate f;
    private final long slideMillis;

    /** {@code slideMillis}: the sliding windows' slide. */
    public AggregateJson(RowTypeInfo aggregateType, long slideMillis) {
        this.f = new RecordLayout.Aggregate(aggregateType);
        this.slideMillis = slideMillis;
    }

    @Override
    public String map(Row agg) {
        return format(agg, f, slideMillis);
    }

    static String format(Row agg, RecordLayout.Aggregate f, long slideMillis) {
        StringBuilder sb = new StringBuilder(240);
        String window = (String) agg.getField(f.window);
        String cell = (String) agg.getField(f.cell);
        long start = (Long) agg.getField(f.windowStart);
        long end = (Long) agg.getField(f.windowEnd);
        long size = (end - start) / 1000;
        sb.append("{\"window\":\"").append(window);
        sb.append("\",\"window_seconds\":").append(size);
        sb.append(",\"slide_seconds\":").append("sliding".equals(window) ? slideMillis / 1000 : size);
        sb.append(",\"precision\":").append(cell.length());
        sb.append(",\"cell\":\"").append(cell);
        sb.append("\",\"window_start\":\"");
        IsoTime.append(sb, start);
        sb.append("\",\"window_end\":\"");
        IsoTime.append(sb, end);
        sb.append("\",\"reports\":").append((int) (Integer) agg.getField(f.reports));
        sb.append(",\"vessels\":").append((int) (Integer) agg.getField(f.vessels));
        sb.append(",\"avg_sog\":");
        Double avg = (Double) agg.getField(f.avgSog);
        sb.append(avg == null ? "null" : pythonFloat3(avg));
        sb.append(",\"sog_sum\":").append(pythonFloat3((Double) agg.getField(f.sogSum)));
        sb.append(",\"sog_reports\":").append((int) (Integer) agg.getField(f.sogReports));
        sb.append(",\"vessel_hours\":").append(pythonFloat6((Double) agg.getField(f.vesselHours)));
        sb.append(",\"by_type\":{");
        String[] names = (String[]) agg.getField(f.typeNames);
        Integer[] vessels = (Integer[]) agg.getField(f.typeVessels);
        Integer[] reports = (Integer[]) agg.getField(f.typeReports);
        Double[] hours = (Double[]) agg.getField(f.typeHours);
        for (int i = 0; i < names.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append('"').append(names[i]).append("\":{\"vessels\":").append((int) vessels[i]);
            sb.append(",\"reports\":").append((int) reports[i]);
            sb.append(",\"vessel_hours\":").append(pythonFloat6(hours[i])).append('}');
        }
        sb.append('}');
        sb.append(",\"revision\":").append((int) (Integer) agg.getField(f.revision)).append('}');
        return sb.toString();
    }

    /**
     * A float already rounded to 6 decimals as Python's {@code repr} prints it: "0.016667", "2.0",
     * and below 0.0001 in Python's exponent form ("2.8e-05").
     */
    static String pythonFloat6(double value) {
        long millionths = Math.round(value * 1e6);
        if (millionths / 1e6 == value && Math.abs(millionths) < 1_000_000_000_000_000L) { // 15 digits: shortest
            return decimal(millionths, 6);
        }
        return pythonFloat6Exact(value);
    }

    static String pythonFloat6Exact(double value) {
        BigDecimal d = new BigDecimal(value).setScale(6, RoundingMode.HALF_EVEN).stripTrailingZeros();
        if (d.signum() == 0) {
            return "0.0";
        }
        if (d.abs().compareTo(new BigDecimal("0.0001")) < 0) {
            String digits = d.unscaledValue().abs().toString();
            int exponent = digits.length() - 1 - d.scale();
            String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            return (d.signum() < 0 ? "-" : "") + mantissa + "e-" + String.format("%02d", -exponent);
        }
        String text = d.toPlainString();
        return text.indexOf('.') < 0 ? text + ".0" : text;
    }

    /** A float already rounded to 3 decimals as Python's {@code repr} prints it ("10.2", "0.0"). */
    static String pythonFloat3(double value) {
        long thousandths = Math.round(value * 1e3);
        if (thousandths / 1e3 == value && Math.abs(thousandths) < 1_000_000_000_000_000L) {
            return decimal(thousandths, 3);
        }
        return pythonFloat3Exact(value);
    }

    static String pythonFloat3Exact(double value) {
        String text = new BigDecimal(value).setScale(3, RoundingMode.HALF_EVEN).stripTrailingZeros().toPlainString();
        return text.indexOf('.') < 0 ? text + ".0" : text;
    }

    /**
     * {@code units / 10^scale} as Python's {@code repr} prints the float nearest to it (scale 3
     * or 6): the shortest digits, ".0" for a whole number, and the exponent form below 0.0001.
     */
    static String decimal(long units, int scale) {
        if (units == 0) {
            return "0.0";
        }
        StringBuilder sb = new StringBuilder(24);
        if (units < 0) {
            sb.append('-');
            units = -units;
        }
        long one = scale == 6 ? 1_000_000L : 1_000L;
        if (scale == 6 && units < 100) { // below 0.0001: Python's exponent form
            String digits = Long.toString(units);
            int zeros = 0;
            while (digits.endsWith("0")) {
                digits = digits.substring(0, digits.length() - 1);
                zeros++;
            }
            int exponent = digits.length() + zeros - 1 - scale;
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            return sb.append("e-").append(-exponent < 10 ? "0" : "").append(-exponent).toString();
        }
        sb.append(units / one).append('.');
        long fraction = units % one;
        if (fraction == 0) {
            return sb.append('0').toString();
        }
        String digits = Long.toString(fraction + one).substring(1); // zero-padded to the scale
        int end = digits.length();
        while (digits.charAt(end - 1) == '0') {
            end--;
        }
        return sb.append(digits, 0, end).toString();
    }

    /** The Kafka key of an aggregate: window, cell and window start (ISO), joined by {@code |}. */
    static String key(Row agg, RecordLayout.Aggregate f) {
        StringBuilder sb = new StringBuilder(48);
        sb.append((String) agg.getField(f.window)).append('|').append((String) agg.getField(f.cell)).append('|');
        IsoTime.append(sb, (Long) agg.getField(f.windowStart));
        return sb.toString();
    }
}
