package ais.flink;

import java.io.Serializable;
import java.util.Arrays;

import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ObjectArrayTypeInfo;
import org.apache.flink.api.java.typeutils.RowTypeInfo;

/**
 * The records that cross between the Python operators and the Java ones, read by field name.
 *
 * <p>Python declares each record once (a dataclass in {@code ais_pipeline/rules/records.py}, its
 * Flink row type built from the dataclass's fields in {@code udfs/ais_pipeline/functions/rows.py}) and
 * hands the row type to the Java operator that reads or writes it. The Java side resolves the
 * fields it uses by name and checks their types here, in the operator's constructor: a field
 * renamed, dropped or retyped on either side fails when the job is built, with the field named,
 * instead of giving wrong numbers. ({@code tests/flink/test_records.py} round-trips each record
 * through Java.)
 */
final class RecordLayout {
    private RecordLayout() {}

    static int field(RowTypeInfo type, String name, TypeInformation<?> expected) {
        int index = type.getFieldIndex(name);
        if (index < 0) {
            throw new IllegalArgumentException(
                    "record " + Arrays.toString(type.getFieldNames()) + " has no field '" + name + "'");
        }
        TypeInformation<?> actual = type.getTypeAt(index);
        if (!actual.equals(expected)) {
            throw new IllegalArgumentException(
                    "record field '" + name + "' is " + actual + ", expected " + expected);
        }
        return index;
    }

    /** A column of a batch: an array of {@code component} values (BASIC_ARRAY in PyFlink). */
    static int arrayField(RowTypeInfo type, String name, TypeInformation<?> component) {
        int index = type.getFieldIndex(name);
        if (index < 0) {
            throw new IllegalArgumentException(
                    "batch " + Arrays.toString(type.getFieldNames()) + " has no column '" + name + "'");
        }
        TypeInformation<?> actual = type.getTypeAt(index);
        TypeInformation<?> inner = null;
        if (actual instanceof BasicArrayTypeInfo) {
            inner = ((BasicArrayTypeInfo<?, ?>) actual).getComponentInfo();
        } else if (actual instanceof ObjectArrayTypeInfo) {
            inner = ((ObjectArrayTypeInfo<?, ?>) actual).getComponentInfo();
        }
        if (inner == null || !inner.equals(component)) {
            throw new IllegalArgumentException("batch column '" + name + "' is " + actual + ", expected " + component + "[]");
        }
        return index;
    }

    /** {@code VesselPane}: one vessel's contribution to one cell and pane. */
    static final class VesselPane implements Serializable {
        private static final long serialVersionUID = 1L;
        final int arity;
        final int cell;
        final int paneStart;
        final int mmsi;
        final int reports;
        final int sogMilliSum;
        final int sogCount;
        final int tumbling;
        final int sliding;
        final int slidingFrom;
        final int vesselMs;
        final int category;

        VesselPane(RowTypeInfo type) {
            arity = type.getArity();
            cell = field(type, "cell", Types.STRING);
            paneStart = field(type, "pane_start", Types.LONG);
            mmsi = field(type, "mmsi", Types.LONG);
            reports = field(type, "reports", Types.INT);
            sogMilliSum = field(type, "sog_milli_sum", Types.LONG);
            sogCount = field(type, "sog_count", Types.INT);
            tumbling = field(type, "tumbling", Types.BOOLEAN);
            sliding = field(type, "sliding", Types.BOOLEAN);
            slidingFrom = field(type, "sliding_from", Types.LONG);
            vesselMs = field(type, "vessel_ms", Types.LONG);
            category = field(type, "category", Types.STRING);
        }
    }

    /** {@code Aggregate}: one firing of one window of one cell. */
    static final class Aggregate implements Serializable {
        private static final long serialVersionUID = 1L;
        final int arity;
        final int window;
        final int cell;
        final int windowStart;
        final int windowEnd;
        final int reports;
        final int vessels;
        final int avgSog;
        final int revision;
        final int vesselHours;
        final int typeNames;
        final int typeVessels;
        final int typeReports;
        final int typeHours;
        final int sogSum;
        final int sogReports;

        Aggregate(RowTypeInfo type) {
            arity = type.getArity();
            window = field(type, "window", Types.STRING);
            cell = field(type, "cell", Types.STRING);
            windowStart = field(type, "window_start", Types.LONG);
            windowEnd = field(type, "window_end", Types.LONG);
            reports = field(type, "reports", Types.INT);
            vessels = field(type, "vessels", Types.INT);
            avgSog = field(type, "avg_sog", Types.DOUBLE);
            revision = field(type, "revision", Types.INT);
            vesselHours = field(type, "vessel_hours", Types.DOUBLE);
            typeNames = arrayField(type, "type_names", Types.STRING);
            typeVessels = arrayField(type, "type_vessels", Types.INT);
            typeReports = arrayField(type, "type_reports", Types.INT);
            typeHours = arrayField(type, "type_hours", Types.DOUBLE);
            sogSum = field(type, "sog_sum", Types.DOUBLE);
            sogReports = field(type, "sog_reports", Types.INT);
        }
    }
}
