package ais.flink;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.json.JsonReadFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.json.JsonMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.conf.ParquetConfiguration;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * One output's records (the JSON lines the job writes) as GeoParquet 1.1 part files, for Flink's
 * {@code FileSink.forBulkFormat}: each line one row of the output's columns, named and typed as
 * its PostgreSQL table's ({@code ais_pipeline/postgres.py} gives the columns: name, type, JSON
 * field), and a {@code geometry} column in WKB (a point for a position, the geohash cell's box
 * for an aggregate, a line from start to end for a gap, a point while it is open; null for the
 * records without a place), with the {@code geo} metadata (WGS 84, the geometry types, the file's
 * bbox) written with the footer. parquet-java without Hadoop, as {@link NoaaParquet} reads.
 */
public final class GeoParquetRecords implements BulkWriter.Factory<String> {
    private static final long serialVersionUID = 1L;

    /** How a record's geometry is made. */
    public enum Geometry { NONE, POINT, CELL, GAP }

    static final String PROJJSON_WGS84 = "{\"$schema\":\"https://proj.org/schemas/v0.7/projjson.schema.json\","
            + "\"type\":\"GeographicCRS\",\"name\":\"WGS 84\",\"datum\":{\"type\":\"GeodeticReferenceFrame\","
            + "\"name\":\"World Geodetic System 1984\",\"ellipsoid\":{\"name\":\"WGS 84\",\"semi_major_axis\":6378137,"
            + "\"inverse_flattening\":298.257223563}},\"coordinate_system\":{\"subtype\":\"ellipsoidal\",\"axis\":["
            + "{\"name\":\"Geodetic latitude\",\"abbreviation\":\"Lat\",\"direction\":\"north\",\"unit\":\"degree\"},"
            + "{\"name\":\"Geodetic longitude\",\"abbreviation\":\"Lon\",\"direction\":\"east\",\"unit\":\"degree\"}]},"
            + "\"id\":{\"authority\":\"EPSG\",\"code\":4326}}";

    /**
     * The column type of an aggregate's figures by ship type: a map from the type's name to its
     * {@code vessels}, {@code reports} and {@code vessel_hours}, as the record's {@code by_type}
     * object holds them.
     */
    public static final String BY_TYPE = "by_type";

    /** A row group's size: what an open part holds in memory, and the step in which its size grows. */
    static final long ROW_GROUP_BYTES = 8L << 20;

    private final String[] names;
    private final String[] types;
    private final String[] fields;
    private final Geometry geometry;

    /** The columns (name, PostgreSQL type, JSON field; the field {@code *} for every field not named). */
    public GeoParquetRecords(String[] names, String[] types, String[] fields, String geometry) {
        this.names = names.clone();
        this.types = types.clone();
        this.fields = fields.clone();
        this.geometry = Geometry.valueOf(geometry);
        for (String name : names) {
            if (name.equals("geometry")) {
                throw new IllegalArgumentException("a column named geometry would hide the records' geometry");
            }
        }
        schema(); // a type that is not known fails when the job is built
    }

    MessageType schema() {
        Types.MessageTypeBuilder message = Types.buildMessage();
        for (int i = 0; i < names.length; i++) {
            message.addField(column(names[i], types[i]));
        }
        message.addField(Types.optional(PrimitiveTypeName.BINARY).named("geometry"));
        return message.named("record");
    }

    private static Type column(String name, String type) {
        switch (type) {
            case "uuid":
            case "text":
            case "jsonb":
                return Types.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named(name);
            case "bigint":
                return Types.optional(PrimitiveTypeName.INT64).named(name);
            case "integer":
            case "smallint":
                return Types.optional(PrimitiveTypeName.INT32).named(name);
            case "double precision":
                return Types.optional(PrimitiveTypeName.DOUBLE).named(name);
            case "boolean":
                return Types.optional(PrimitiveTypeName.BOOLEAN).named(name);
            case BY_TYPE:
                return Types.optionalMap()
                        .key(Types.required(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("key"))
                        .value(Types.optionalGroup()
                                .addField(Types.optional(PrimitiveTypeName.INT32).named("vessels"))
                                .addField(Types.optional(PrimitiveTypeName.INT32).named("reports"))
                                .addField(Types.optional(PrimitiveTypeName.DOUBLE).named("vessel_hours"))
                                .named("value"))
                        .named(name);
            case "timestamp with time zone":
                return Types.optional(PrimitiveTypeName.INT64)
                        .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MILLIS))
                        .named(name);
            default:
                throw new IllegalArgumentException("column " + name + ": type " + type + " has no Parquet type here");
        }
    }

    @Override
    public BulkWriter<String> create(FSDataOutputStream out) throws IOException {
        Records support = new Records(this);
        ParquetWriter<String> writer = new Builder(new StreamFile(out), support)
                .withConf(new PlainParquetConfiguration())
                .withCodecFactory(new ParquetCodecs())
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withRowGroupSize(ROW_GROUP_BYTES) // rows are held in memory until their group is written
                .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                .build();
        return new BulkWriter<String>() {
            @Override
            public void addElement(String line) throws IOException {
                writer.write(line);
            }

            @Override
            public void flush() {
                // rows are buffered into the row group until it is full or the file ends
            }

            @Override
            public void finish() throws IOException {
                writer.close(); // the footer; the stream stays open for the sink to commit
            }
        };
    }

    /** A line's row: its columns' values, then the geometry; the extent and types of the file's geometries. */
    static final class Records extends WriteSupport<String> {
        private final GeoParquetRecords spec;
        // JSON as Python's json module writes it: NaN and Infinity among the numbers
        private final ObjectMapper mapper = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();
        private final Set<String> named = new HashSet<>();
        private final Set<String> kinds = new HashSet<>();
        private RecordConsumer out;
        private double minX = Double.POSITIVE_INFINITY;
        private double minY = Double.POSITIVE_INFINITY;
        private double maxX = Double.NEGATIVE_INFINITY;
        private double maxY = Double.NEGATIVE_INFINITY;

        Records(GeoParquetRecords spec) {
            this.spec = spec;
            for (String field : spec.fields) {
                named.add(field);
            }
        }

        @Override
        public WriteContext init(Configuration configuration) {
            return init((ParquetConfiguration) null);
        }

        @Override
        public WriteContext init(ParquetConfiguration configuration) {
            return new WriteContext(spec.schema(), new HashMap<>());
        }

        @Override
        public void prepareForWrite(RecordConsumer recordConsumer) {
            out = recordConsumer;
        }

        @Override
        public void write(String line) {
            JsonNode record;
            try {
                record = mapper.readTree(line);
            } catch (IOException e) {
                throw new IllegalArgumentException("not a JSON record: " + line, e);
            }
            out.startMessage();
            for (int i = 0; i < spec.names.length; i++) {
                JsonNode value = spec.fields[i].equals("*") ? rest(record) : record.get(spec.fields[i]);
                if (value == null || value.isNull()) {
                    continue;
                }
                out.startField(spec.names[i], i);
                add(spec.types[i], value);
                out.endField(spec.names[i], i);
            }
            byte[] wkb = geometry(record);
            if (wkb != null) {
                out.startField("geometry", spec.names.length);
                out.addBinary(Binary.fromConstantByteArray(wkb));
                out.endField("geometry", spec.names.length);
            }
            out.endMessage();
        }

        private JsonNode rest(JsonNode record) {
            ObjectNode others = mapper.createObjectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = record.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                if (!named.contains(field.getKey())) {
                    others.set(field.getKey(), field.getValue());
                }
            }
            return others.size() == 0 ? null : others;
        }

        private void add(String type, JsonNode value) {
            switch (type) {
                case BY_TYPE:
                    byType(value);
                    break;
                case "jsonb": // the value's JSON text
                    out.addBinary(Binary.fromString(value.toString()));
                    break;
                case "uuid":
                case "text":
                    out.addBinary(Binary.fromString(value.isTextual() ? value.asText() : value.toString()));
                    break;
                case "bigint":
                    out.addLong(integral(value, type).longValue());
                    break;
                case "integer":
                case "smallint":
                    long n = integral(value, type).longValue();
                    if (n != (int) n) {
                        throw new IllegalArgumentException(type + " out of range: " + value);
                    }
                    out.addInteger((int) n);
                    break;
                case "double precision":
                    if (!value.isNumber()) {
                        throw new IllegalArgumentException(type + " from " + value);
                    }
                    out.addDouble(value.asDouble());
                    break;
                case "boolean":
                    if (!value.isBoolean()) {
                        throw new IllegalArgumentException(type + " from " + value);
                    }
                    out.addBoolean(value.asBoolean());
                    break;
                default: // timestamp with time zone: the records' ISO 8601 text
                    out.addLong(Instant.parse(value.asText()).toEpochMilli());
            }
        }

        private static final List<String> FIGURES = List.of("vessels", "reports", "vessel_hours");

        private static List<String> iterable(Iterator<String> names) {
            List<String> all = new ArrayList<>();
            names.forEachRemaining(all::add);
            return all;
        }

        /** A map of the record's object: each field a key, its value the group of the type's figures. */
        private void byType(JsonNode value) {
            if (!value.isObject()) {
                throw new IllegalArgumentException(BY_TYPE + " from " + value);
            }
            out.startGroup();
            if (value.size() > 0) {
                out.startField("key_value", 0);
                for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> entry = it.next();
                    out.startGroup();
                    out.startField("key", 0);
                    out.addBinary(Binary.fromString(entry.getKey()));
                    out.endField("key", 0);
                    JsonNode figures = entry.getValue();
                    if (figures != null && !figures.isNull()) {
                        if (!figures.isObject() || !FIGURES.containsAll(iterable(figures.fieldNames()))) {
                            throw new IllegalArgumentException(BY_TYPE + " from " + value); // no figure is left out
                        }
                        out.startField("value", 1);
                        out.startGroup();
                        for (int i = 0; i < FIGURES.size(); i++) {
                            JsonNode figure = figures.get(FIGURES.get(i));
                            if (figure == null || figure.isNull()) {
                                continue;
                            }
                            out.startField(FIGURES.get(i), i);
                            add(i < 2 ? "integer" : "double precision", figure);
                            out.endField(FIGURES.get(i), i);
                        }
                        out.endGroup();
                        out.endField("value", 1);
                    }
                    out.endGroup();
                }
                out.endField("key_value", 0);
            }
            out.endGroup();
        }

        /** An integer field's value; a record that holds anything else is not written as a wrong number. */
        private static Number integral(JsonNode value, String type) {
            if (!value.isIntegralNumber() || !value.canConvertToLong()) {
                throw new IllegalArgumentException(type + " from " + value);
            }
            return value.longValue();
        }

        private static Double number(JsonNode record, String field) {
            JsonNode value = record.get(field);
            return value == null || !value.isNumber() ? null : value.asDouble();
        }

        private void extend(double x, double y) {
            minX = Math.min(minX, x);
            minY = Math.min(minY, y);
            maxX = Math.max(maxX, x);
            maxY = Math.max(maxY, y);
        }

        byte[] geometry(JsonNode record) {
            switch (spec.geometry) {
                case POINT: {
                    Double lat = number(record, "lat");
                    Double lon = number(record, "lon");
                    return lat == null || lon == null ? null : point(lon, lat);
                }
                case GAP: {
                    Double lat = number(record, "start_lat");
                    Double lon = number(record, "start_lon");
                    Double endLat = number(record, "end_lat");
                    Double endLon = number(record, "end_lon");
                    if (lat == null || lon == null) {
                        return null;
                    }
                    return endLat == null || endLon == null ? point(lon, lat) : line(lon, lat, endLon, endLat);
                }
                case CELL: {
                    JsonNode cell = record.get("cell");
                    return cell == null || !cell.isTextual() ? null : box(Geohash.bounds(cell.asText()));
                }
                default:
                    return null;
            }
        }

        private byte[] point(double x, double y) {
            extend(x, y);
            kinds.add("Point");
            return ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).putInt(1)
                    .putDouble(x).putDouble(y).array();
        }

        private byte[] line(double x1, double y1, double x2, double y2) {
            extend(x1, y1);
            extend(x2, y2);
            kinds.add("LineString");
            return ByteBuffer.allocate(41).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).putInt(2).putInt(2)
                    .putDouble(x1).putDouble(y1).putDouble(x2).putDouble(y2).array();
        }

        /** A box {south, west, north, east} as a polygon, its ring counterclockwise. */
        private byte[] box(double[] b) {
            double south = b[0], west = b[1], north = b[2], east = b[3];
            extend(west, south);
            extend(east, north);
            kinds.add("Polygon");
            ByteBuffer w = ByteBuffer.allocate(9 + 4 + 5 * 16).order(ByteOrder.LITTLE_ENDIAN);
            w.put((byte) 1).putInt(3).putInt(1).putInt(5);
            double[][] ring = {{west, south}, {east, south}, {east, north}, {west, north}, {west, south}};
            for (double[] p : ring) {
                w.putDouble(p[0]).putDouble(p[1]);
            }
            return w.array();
        }

        @Override
        public FinalizedWriteContext finalizeWrite() {
            Map<String, String> meta = new HashMap<>();
            meta.put("geo", geoMetadata(kinds, minX <= maxX ? new double[] {minX, minY, maxX, maxY} : null));
            return new FinalizedWriteContext(meta);
        }
    }

    /** GeoParquet 1.1's {@code geo} metadata of a file whose geometries are of {@code kinds} within {@code bbox}. */
    static String geoMetadata(Set<String> kinds, double[] bbox) {
        List<String> sorted = new ArrayList<>(kinds);
        java.util.Collections.sort(sorted);
        StringBuilder types = new StringBuilder();
        for (String kind : sorted) {
            types.append(types.length() == 0 ? "" : ",").append('"').append(kind).append('"');
        }
        StringBuilder column = new StringBuilder("{\"encoding\":\"WKB\",\"geometry_types\":[").append(types).append("],");
        column.append("\"crs\":").append(PROJJSON_WGS84);
        if (bbox != null) {
            column.append(",\"bbox\":[").append(bbox[0]).append(',').append(bbox[1]).append(',')
                    .append(bbox[2]).append(',').append(bbox[3]).append(']');
        }
        column.append('}');
        return "{\"version\":\"1.1.0\",\"primary_column\":\"geometry\",\"columns\":{\"geometry\":" + column + "}}";
    }

    /** The builder of a writer of lines with {@link Records}, without Hadoop. */
    static final class Builder extends ParquetWriter.Builder<String, Builder> {
        private final Records support;

        Builder(OutputFile file, Records support) {
            super(file);
            this.support = support;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected WriteSupport<String> getWriteSupport(Configuration conf) {
            return support;
        }

        @Override
        protected WriteSupport<String> getWriteSupport(ParquetConfiguration conf) {
            return support;
        }
    }

    /** Flink's output stream as a Parquet file that closing does not close (the sink commits it). */
    static final class StreamFile implements OutputFile, Serializable {
        private static final long serialVersionUID = 1L;
        private final transient FSDataOutputStream out;

        StreamFile(FSDataOutputStream out) {
            this.out = out;
        }

        @Override
        public PositionOutputStream create(long blockSizeHint) {
            return new PositionOutputStream() {
                @Override
                public long getPos() throws IOException {
                    return out.getPos();
                }

                @Override
                public void write(int b) throws IOException {
                    out.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    out.write(b, off, len);
                }

                @Override
                public void flush() throws IOException {
                    out.flush();
                }

                @Override
                public void close() throws IOException {
                    out.flush();
                }
            };
        }

        @Override
        public PositionOutputStream createOrOverwrite(long blockSizeHint) {
            return create(blockSizeHint);
        }

        @Override
        public boolean supportsBlockSize() {
            return false;
        }

        @Override
        public long defaultBlockSize() {
            return 0;
        }

        @Override
        public String getPath() {
            return "flink-part-file";
        }
    }
}
