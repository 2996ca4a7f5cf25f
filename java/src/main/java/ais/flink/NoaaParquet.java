package ais.flink;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import ais.flink.ArchiveDecoders.ArchiveFault;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.json.JsonReadFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.json.JsonMapper;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.PlainReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * A NOAA MarineCadastre GeoParquet day as lines of text: a header (the NOAA 2025 CSV layout's
 * columns, then {@code geoparquet_row} and {@code geometry_problem}), then one CSV line per row,
 * so that the rows are decided by the same rules as NOAA's CSV rows. Read row group by row group,
 * {@link #BATCH_ROWS} rows of the requested columns at a time, never whole.
 *
 * <p>The Python reference is {@code ais_pipeline.geoparquet}: both give the same lines for every
 * golden file ({@code tests/golden/archives.json}), and their rules are written there. Parquet is
 * read with parquet-java without Hadoop: the codecs come from the aircompressor that Flink ships
 * (snappy, zstd) and the JDK (gzip), see {@link ParquetCodecs}.
 */
final class NoaaParquet implements AutoCloseable {
    static final String[] COLUMNS = {
        "mmsi", "base_date_time", "longitude", "latitude", "sog", "cog", "heading", "vessel_name", "imo",
        "call_sign", "vessel_type", "status", "length", "width", "draft", "cargo", "transceiver",
    };
    static final String HEADER = String.join(",", COLUMNS) + ",geoparquet_row,geometry_problem";
    static final int BATCH_ROWS = 8192;
    private static final byte[] MAGIC = {'P', 'A', 'R', '1'};
    private static final long MIN_MS = -62135596800000L; // 0001-01-01T00:00:00Z
    private static final long MAX_MS = 253402300799999L; // 9999-12-31T23:59:59.999Z
    private static final Set<String> WGS84 = Set.of("EPSG:4326", "OGC:CRS84");
    // JSON as Python's json module reads it: NaN and Infinity (a bbox of an empty day), no text after
    private static final ObjectMapper GEO_JSON = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private static final int LON = 2;
    private static final int LAT = 3;

    private enum Kind { INT, UINT, FLOAT, DOUBLE, STRING, MS, US, NS, INT96 }

    private final ParquetFileReader reader;
    private final MessageType projection;
    private final String createdBy;
    private final int[] at; // COLUMNS index -> projection column, -1: none
    private final Kind[] kinds; // by projection column
    private final ColumnDescriptor[] columns;
    private final int geometry; // projection column of the WKB geometry, -1: latitude and longitude columns
    private boolean headerGiven;
    private int group; // row groups read
    private long row; // rows given
    private ColumnReader[] readers;
    private long groupLeft;
    private String[][] batch; // by projection column, the batch's cells
    private String[] problems;
    private int batchSize;
    private int batchAt;

    /** A file the Parquet reader reads: named {@code .parquet}, or starting with Parquet's magic. */
    static boolean isParquet(Path path, long length) throws IOException {
        String name = path.getName().toLowerCase(Locale.ROOT);
        if (length == 0) {
            return false;
        }
        for (String suffix : ArchiveLines.COMPRESSED) {
            if (name.endsWith(suffix)) {
                return false;
            }
        }
        if (name.endsWith(".parquet")) {
            return true;
        }
        if (length < 4) {
            return false;
        }
        byte[] head = new byte[4];
        try (FSDataInputStream in = path.getFileSystem().open(path)) {
            int n = 0;
            while (n < 4) {
                int r = in.read(head, n, 4 - n);
                if (r < 0) {
                    return false;
                }
                n += r;
            }
        }
        return java.util.Arrays.equals(head, MAGIC);
    }

    NoaaParquet(Path path, long length) throws IOException {
        ParquetReadOptions options = PlainReadOptions.of(new ParquetCodecs());
        ParquetFileReader opened;
        try {
            opened = ParquetFileReader.open(new FlinkInputFile(path, length), options);
        } catch (IOException | RuntimeException e) {
            throw new ArchiveFault("parquet: not a Parquet file (its footer cannot be read)");
        }
        reader = opened;
        try {
            FileMetaData meta = reader.getFooter().getFileMetaData();
            createdBy = meta.getCreatedBy();
            MessageType schema = meta.getSchema();
            Map<String, Type> names = new HashMap<>();
            for (Type field : schema.getFields()) {
                names.put(field.getName().toLowerCase(Locale.ROOT), field);
            }
            String geo = geometryColumn(meta.getKeyValueMetaData().get("geo"));
            if (geo != null && !names.containsKey(geo.toLowerCase(Locale.ROOT))) {
                geo = null;
            }
            List<String> lacking = new ArrayList<>();
            for (String required : new String[] {"mmsi", "base_date_time"}) {
                if (!names.containsKey(required)) {
                    lacking.add(required);
                }
            }
            if (geo == null && !(names.containsKey("latitude") && names.containsKey("longitude"))) {
                lacking.add("geometry");
            }
            if (!lacking.isEmpty()) {
                throw new ArchiveFault("parquet: not the NOAA AIS layout, it lacks " + String.join(", ", lacking));
            }
            List<Type> read = new ArrayList<>();
            List<Kind> readKinds = new ArrayList<>();
            at = new int[COLUMNS.length];
            for (int c = 0; c < COLUMNS.length; c++) {
                at[c] = -1;
                boolean position = c == LON || c == LAT;
                Type field = names.get(COLUMNS[c]);
                if (field == null || (geo != null && position)) {
                    continue;
                }
                Kind kind = kind(field);
                if (c == 0 && kind != Kind.INT && kind != Kind.UINT && kind != Kind.STRING) {
                    throw notRead(field);
                }
                at[c] = read.size();
                read.add(field);
                readKinds.add(kind);
            }
            if (geo != null) {
                Type field = names.get(geo.toLowerCase(Locale.ROOT));
                boolean bytes;
                try {
                    bytes = kind(field) == Kind.STRING;
                } catch (ArchiveFault e) {
                    bytes = false;
                }
                if (!bytes) {
                    throw new ArchiveFault("parquet: the geometry column " + field.getName() + " does not hold bytes");
                }
                geometry = read.size();
                read.add(field);
                readKinds.add(Kind.STRING);
            } else {
                geometry = -1;
            }
            projection = new MessageType(schema.getName(), read);
            reader.setRequestedSchema(projection);
            kinds = readKinds.toArray(new Kind[0]);
            columns = new ColumnDescriptor[read.size()];
            for (int i = 0; i < columns.length; i++) {
                columns[i] = projection.getColumnDescription(new String[] {read.get(i).getName()});
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** The primary geometry column that the {@code geo} metadata names, null without it. */
    static String geometryColumn(String geo) throws ArchiveFault {
        if (geo == null) {
            return null;
        }
        JsonNode column = null;
        JsonNode name = null;
        try {
            JsonNode root = GEO_JSON.readTree(geo);
            name = root.get("primary_column");
            if (name != null && name.isTextual() && root.get("columns") != null) {
                column = root.get("columns").get(name.asText());
            }
        } catch (IOException | RuntimeException e) {
            column = null; // not JSON
        }
        if (column == null || !column.isObject() || name == null || !name.isTextual()) {
            throw new ArchiveFault("parquet: its geo metadata names no primary geometry column");
        }
        JsonNode encoding = column.get("encoding");
        String text = encoding != null && encoding.isTextual() ? encoding.asText() : "missing";
        if (!text.toUpperCase(Locale.ROOT).equals("WKB")) {
            throw new ArchiveFault("parquet: the geometry is not WKB-encoded (its encoding is " + text + ")");
        }
        if (column.has("crs")) {
            String key = crsKey(column.get("crs"));
            if (!WGS84.contains(key)) {
                throw new ArchiveFault(
                        "parquet: the geometry's CRS is " + key + ", not WGS 84 (EPSG:4326 or OGC:CRS84)");
            }
        }
        return name.asText();
    }

    static String crsKey(JsonNode crs) {
        if (crs.isNull()) {
            return "undefined";
        }
        if (crs.isTextual()) {
            return crs.asText();
        }
        if (crs.isObject()) {
            JsonNode id = crs.get("id");
            if (id != null && id.isObject() && id.has("authority") && id.has("code")) {
                return scalar(id.get("authority")) + ":" + scalar(id.get("code"));
            }
            return "without an id";
        }
        return "unreadable";
    }

    private static String scalar(JsonNode value) {
        return value.isContainerNode() ? "" : value.asText();
    }

    private static ArchiveFault notRead(Type field) {
        return new ArchiveFault("parquet: column " + field.getName() + " is of a type that is not read");
    }

    /** How a column's values become text, as the Python reference reads its Arrow type. */
    private static Kind kind(Type field) throws ArchiveFault {
        if (!field.isPrimitive() || field.isRepetition(Type.Repetition.REPEATED)) {
            throw notRead(field);
        }
        PrimitiveType type = field.asPrimitiveType();
        LogicalTypeAnnotation logical = type.getLogicalTypeAnnotation();
        switch (type.getPrimitiveTypeName()) {
            case INT32:
            case INT64:
                if (logical == null) {
                    return Kind.INT;
                }
                if (logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation) {
                    return ((LogicalTypeAnnotation.IntLogicalTypeAnnotation) logical).isSigned() ? Kind.INT : Kind.UINT;
                }
                if (logical instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation
                        && type.getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.INT64) {
                    switch (((LogicalTypeAnnotation.TimestampLogicalTypeAnnotation) logical).getUnit()) {
                        case MILLIS:
                            return Kind.MS;
                        case MICROS:
                            return Kind.US;
                        default:
                            return Kind.NS;
                    }
                }
                throw notRead(field);
            case INT96:
                return Kind.INT96;
            case FLOAT:
                return Kind.FLOAT;
            case DOUBLE:
                return Kind.DOUBLE;
            case BINARY:
                if (logical instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation) {
                    throw notRead(field);
                }
                return Kind.STRING;
            default:
                throw notRead(field);
        }
    }

    /** The next line: the header, then a row's; null after the last row. */
    String next() throws IOException {
        if (!headerGiven) {
            headerGiven = true;
            return HEADER;
        }
        if (batchAt == batchSize && !nextBatch()) {
            return null;
        }
        int i = batchAt++;
        row++;
        StringBuilder line = new StringBuilder(160);
        for (int c = 0; c < COLUMNS.length; c++) {
            if (c > 0) {
                line.append(',');
            }
            if (geometry >= 0 && (c == LON || c == LAT)) {
                line.append(batch[geometry][i * 2 + (c == LON ? 0 : 1)]);
            } else if (at[c] >= 0) {
                line.append(cell(batch[at[c]][i]));
            }
        }
        line.append(',').append(row).append(',');
        if (geometry >= 0) {
            line.append(cell(problems[i]));
        }
        return line.toString();
    }

    /** The lines given so far, the header included. */
    long given() {
        return (headerGiven ? 1 : 0) + row;
    }

    /** Skips up to {@code n} lines (the header counts one), whole row groups unread; the lines skipped. */
    long skip(long n) throws IOException {
        long skipped = 0;
        if (n > 0 && !headerGiven) {
            headerGiven = true;
            skipped++;
        }
        while (batchAt == batchSize && groupLeft == 0 && group < reader.getRowGroups().size()
                // strictly more: the last group the lines reach is read, so that a fault in it comes again
                && n - skipped > reader.getRowGroups().get(group).getRowCount()) {
            long rows = reader.getRowGroups().get(group).getRowCount();
            try {
                reader.skipNextRowGroup();
            } catch (RuntimeException e) {
                throw groupFault(group + 1);
            }
            group++;
            row += rows;
            skipped += rows;
        }
        while (skipped < n && next() != null) {
            skipped++;
        }
        return skipped;
    }

    /** The fault of the row group of this number (from 1). */
    private static ArchiveFault groupFault(int number) {
        return new ArchiveFault("parquet: row group " + number + " cannot be read");
    }

    /** Decodes the next batch of rows; false after the last row group. */
    private boolean nextBatch() throws IOException {
        while (groupLeft == 0) {
            if (group == reader.getRowGroups().size()) {
                return false;
            }
            try {
                PageReadStore pages = reader.readNextRowGroup();
                if (pages == null) {
                    return false;
                }
                ColumnReadStoreImpl store = new ColumnReadStoreImpl(
                        pages, new GroupRecordConverter(projection).getRootConverter(), projection, createdBy);
                readers = new ColumnReader[columns.length];
                for (int i = 0; i < columns.length; i++) {
                    readers[i] = store.getColumnReader(columns[i]);
                }
                groupLeft = pages.getRowCount();
            } catch (ParquetCodecs.NotRead e) {
                throw new ArchiveFault(e.getMessage());
            } catch (IOException | RuntimeException e) {
                throw groupFault(group + 1);
            }
            group++;
            if (groupLeft == 0) {
                continue;
            }
        }
        int n = (int) Math.min(BATCH_ROWS, groupLeft);
        try {
            if (batch == null) {
                batch = new String[columns.length][];
            }
            for (int c = 0; c < columns.length; c++) {
                batch[c] = c == geometry ? points(readers[c], columns[c], n) : texts(readers[c], columns[c], kinds[c], n);
            }
        } catch (ParquetCodecs.NotRead e) {
            throw new ArchiveFault(e.getMessage());
        } catch (RuntimeException e) {
            throw groupFault(group); // the group being read: already counted
        }
        groupLeft -= n;
        batchSize = n;
        batchAt = 0;
        return true;
    }

    private String[] points(ColumnReader r, ColumnDescriptor d, int n) {
        String[] out = new String[n * 2];
        problems = new String[n];
        int defined = d.getMaxDefinitionLevel();
        for (int i = 0; i < n; i++) {
            String[] point = {"", "", ""};
            if (r.getCurrentDefinitionLevel() == defined) {
                point = wkbPoint(r.getBinary().getBytes());
            }
            out[i * 2] = point[0];
            out[i * 2 + 1] = point[1];
            problems[i] = point[2];
            r.consume();
        }
        return out;
    }

    private static String[] texts(ColumnReader r, ColumnDescriptor d, Kind kind, int n) {
        String[] out = new String[n];
        int defined = d.getMaxDefinitionLevel();
        boolean int32 = d.getPrimitiveType().getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.INT32;
        for (int i = 0; i < n; i++) {
            if (r.getCurrentDefinitionLevel() != defined) {
                out[i] = "";
            } else {
                switch (kind) {
                    case INT:
                        out[i] = int32 ? Integer.toString(r.getInteger()) : Long.toString(r.getLong());
                        break;
                    case UINT:
                        out[i] = int32 ? Integer.toUnsignedString(r.getInteger()) : Long.toUnsignedString(r.getLong());
                        break;
                    case FLOAT:
                        out[i] = number(r.getFloat(), true);
                        break;
                    case DOUBLE:
                        out[i] = number(r.getDouble(), false);
                        break;
                    case MS:
                        out[i] = time(r.getLong(), "ms");
                        break;
                    case US:
                        out[i] = time(r.getLong(), "us");
                        break;
                    case NS:
                        out[i] = time(r.getLong(), "ns");
                        break;
                    case INT96:
                        out[i] = time(int96Nanos(r.getBinary()), "ns");
                        break;
                    default:
                        out[i] = string(r.getBinary());
                }
            }
            r.consume();
        }
        return out;
    }

    /** An INT96 time (nanoseconds of the day, then the Julian day, little-endian) in nanoseconds. */
    static long int96Nanos(Binary value) {
        ByteBuffer b = value.toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        long nanos = b.getLong(b.position());
        long julian = b.getInt(b.position() + 8);
        return (julian - 2440588L) * 86_400_000_000_000L + nanos;
    }

    /**
     * A float or double as the shortest decimal that reads back as the same value, rounded to
     * nearest at that many significant digits, without an exponent ({@code single}: a float read
     * back as a float); NaN empty, infinity {@code inf} or {@code -inf}.
     */
    static String number(double value, boolean single) {
        if (Double.isNaN(value)) {
            return "";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "inf" : "-inf";
        }
        if (value == 0) {
            return "0";
        }
        BigDecimal exact = new BigDecimal(value);
        for (int digits = 1; digits < (single ? 10 : 18); digits++) {
            BigDecimal rounded = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN));
            double back = Double.parseDouble(rounded.toString());
            if (single ? (float) back == (float) value : back == value) {
                return rounded.stripTrailingZeros().toPlainString();
            }
        }
        return exact.stripTrailingZeros().toPlainString(); // not reached: 9 and 17 digits read back
    }

    /** A time of {@code unit} ("ms", "us", "ns") since the epoch, UTC. */
    static String time(long value, String unit) {
        long per = unit.equals("ms") ? 1 : unit.equals("us") ? 1000 : 1_000_000;
        long ms = Math.floorDiv(value, per);
        if (ms < MIN_MS || ms > MAX_MS) {
            return value + unit;
        }
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(ms, 1000), 0, ZoneOffset.UTC);
        String text = String.format(Locale.ROOT, "%04d-%02d-%02d %02d:%02d:%02d",
                t.getYear(), t.getMonthValue(), t.getDayOfMonth(), t.getHour(), t.getMinute(), t.getSecond());
        long millis = Math.floorMod(ms, 1000);
        return millis == 0 ? text : text + String.format(Locale.ROOT, ".%03d", millis);
    }

    static String string(Binary value) {
        byte[] bytes = value.getBytes();
        String text = ArchiveDecoders.utf8(bytes, 0, bytes.length);
        return text.replace("\r\n", " ").replace('\r', ' ').replace('\n', ' ');
    }

    /** A cell of a CSV line: quoted when it holds a comma or a quote. */
    static String cell(String text) {
        if (text.indexOf(',') < 0 && text.indexOf('"') < 0) {
            return text;
        }
        return '"' + text.replace("\"", "\"\"") + '"';
    }

    /** A WKB geometry as {longitude, latitude, problem}. */
    static String[] wkbPoint(byte[] raw) {
        if (raw.length < 5) {
            return new String[] {"", "", "WKB of " + raw.length + " bytes"};
        }
        int order = raw[0] & 0xff;
        if (order > 1) {
            return new String[] {"", "", "WKB byte order " + order};
        }
        ByteBuffer b = ByteBuffer.wrap(raw).order(order == 1 ? ByteOrder.LITTLE_ENDIAN : ByteOrder.BIG_ENDIAN);
        long kind = b.getInt(1) & 0xffffffffL;
        int at = 5;
        int dims = 2;
        if ((kind & 0x20000000L) != 0) {
            at += 4;
        }
        if ((kind & 0x80000000L) != 0) {
            dims++;
        }
        if ((kind & 0x40000000L) != 0) {
            dims++;
        }
        long base = kind & 0x0FFFFFFFL;
        if (base >= 1000) {
            long flavour = base / 1000;
            dims += flavour == 1 || flavour == 2 ? 1 : flavour == 3 ? 2 : 0;
            base %= 1000;
        }
        if (base != 1) {
            return new String[] {"", "", "a WKB geometry of type " + base + ", not a point"};
        }
        if (raw.length < at + 8 * dims) {
            return new String[] {"", "", "WKB of " + raw.length + " bytes"};
        }
        double x = b.getDouble(at);
        double y = b.getDouble(at + 8);
        if (Double.isNaN(x) && Double.isNaN(y)) {
            return new String[] {"", "", ""};
        }
        return new String[] {number(x, false), number(y, false), ""};
    }

    private void closeQuietly() {
        try {
            reader.close();
        } catch (IOException | RuntimeException ignored) {
            // nothing more is read from it
        }
    }

    @Override
    public void close() {
        closeQuietly();
    }

    /** A file on one of Flink's file systems, as parquet-java reads it. */
    static final class FlinkInputFile implements InputFile {
        private final Path path;
        private final long length;

        FlinkInputFile(Path path, long length) {
            this.path = path;
            this.length = length;
        }

        @Override
        public long getLength() {
            return length;
        }

        @Override
        public SeekableInputStream newStream() throws IOException {
            FSDataInputStream in = path.getFileSystem().open(path);
            return new DelegatingSeekableInputStream(in) {
                @Override
                public long getPos() throws IOException {
                    return in.getPos();
                }

                @Override
                public void seek(long newPos) throws IOException {
                    in.seek(newPos);
                }
            };
        }
    }
}
