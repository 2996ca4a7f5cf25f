package ais.flink;

import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;

/**
 * The row types of the records the tests feed the operators, as {@code udfs/ais_pipeline/functions/rows.py}
 * builds them from the Python dataclasses ({@code tests/flink/test_records.py} checks that
 * Python's types and these agree, through the JVM).
 */
final class Rows {
    private Rows() {}

    static final RowTypeInfo VESSEL_PANE =
            new RowTypeInfo(
                    new TypeInformation<?>[] {
                        Types.STRING, Types.LONG, Types.LONG, Types.INT, Types.LONG, Types.INT, Types.BOOLEAN,
                        Types.BOOLEAN, Types.LONG, Types.LONG, Types.STRING
                    },
                    new String[] {
                        "cell", "pane_start", "mmsi", "reports", "sog_milli_sum", "sog_count", "tumbling", "sliding",
                        "sliding_from", "vessel_ms", "category"
                    });

    static final RowTypeInfo AGGREGATE =
            new RowTypeInfo(
                    new TypeInformation<?>[] {
                        Types.STRING, Types.STRING, Types.LONG, Types.LONG, Types.INT, Types.INT, Types.DOUBLE, Types.INT,
                        Types.DOUBLE, BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO, BasicArrayTypeInfo.INT_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.INT_ARRAY_TYPE_INFO, BasicArrayTypeInfo.DOUBLE_ARRAY_TYPE_INFO, Types.DOUBLE,
                        Types.INT
                    },
                    new String[] {
                        "window", "cell", "window_start", "window_end", "reports", "vessels", "avg_sog", "revision",
                        "vessel_hours", "type_names", "type_vessels", "type_reports", "type_hours", "sog_sum",
                        "sog_reports"
                    });

    /** The ship type categories, as the job hands them to the window operator. */
    static final String CATEGORIES = "fishing,service,sailing,pleasure,high_speed,passenger,cargo,tanker,other,unknown";
}
