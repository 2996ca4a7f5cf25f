package ais.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Set;

import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.parquet.PlainReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GeoParquetRecords}: output records as GeoParquet rows, read back with parquet-java
 * (the tests run without Hadoop, as the job does): the columns' values and types, the WKB of each
 * kind of geometry, and the {@code geo} metadata with the file's bbox and geometry types.
 */
class GeoParquetRecordsTest {
    @TempDir
    File dir;

    private static final String[] NAMES = {"id", "mmsi", "event_time", "lat", "lon", "open", "fields"};
    private static final String[] TYPES = {
        "uuid", "bigint", "timestamp with time zone", "double precision", "double precision", "boolean", "jsonb"
    };
    private static final String[] FIELDS = {"id", "mmsi", "timestamp", "lat", "lon", "open", "*"};

    private ParquetFileReader write(String geometry, String... lines) throws IOException {
        Path path = new Path(new File(dir, geometry + ".parquet").toURI());
        GeoParquetRecords factory = new GeoParquetRecords(NAMES, TYPES, FIELDS, geometry);
        try (FSDataOutputStream out = FileSystem.getLocalFileSystem().create(path, FileSystem.WriteMode.OVERWRITE)) {
            BulkWriter<String> writer = factory.create(out);
            for (String line : lines) {
                writer.addElement(line);
            }
            writer.finish();
        }
        long length = FileSystem.getLocalFileSystem().getFileStatus(path).getLen();
        return ParquetFileReader.open(new NoaaParquet.FlinkInputFile(path, length), PlainReadOptions.of(new ParquetCodecs()));
    }

    private static ColumnReader column(ParquetFileReader reader, PageReadStore pages, String name) {
        MessageType schema = reader.getFooter().getFileMetaData().getSchema();
        ColumnDescriptor d = schema.getColumnDescription(new String[] {name});
        return new ColumnReadStoreImpl(pages, new GroupRecordConverter(schema).getRootConverter(), schema, "test")
                .getColumnReader(d);
    }

    @Test
    void positionsArePointsWithTheirColumnsAndTheFilesBbox() throws IOException {
        try (ParquetFileReader reader = write("POINT",
                "{\"id\":\"a\",\"mmsi\":367000001,\"timestamp\":\"2024-01-01T00:00:01.500Z\",\"lat\":40.5,\"lon\":-74.25,"
                        + "\"open\":true,\"name\":\"X\"}",
                "{\"id\":\"b\",\"mmsi\":367000002,\"timestamp\":\"2024-01-01T00:00:02.000Z\",\"lat\":null,\"lon\":-73.0}",
                "{\"id\":\"c\",\"mmsi\":367000003,\"timestamp\":\"2024-01-01T00:00:03.000Z\",\"lat\":41.0,\"lon\":-73.5}")) {
            assertEquals(3, reader.getRecordCount());
            String geo = reader.getFooter().getFileMetaData().getKeyValueMetaData().get("geo");
            assertEquals(GeoParquetRecords.geoMetadata(Set.of("Point"), new double[] {-74.25, 40.5, -73.5, 41.0}), geo);
            PageReadStore pages = reader.readNextRowGroup();
            ColumnReader time = column(reader, pages, "event_time");
            assertEquals(1704067201500L, time.getLong());
            ColumnReader fields = column(reader, pages, "fields");
            assertEquals("{\"name\":\"X\"}", fields.getBinary().toStringUsingUTF8());
            fields.consume();
            assertEquals(0, fields.getCurrentDefinitionLevel()); // no other field: null
            ColumnReader geometry = column(reader, pages, "geometry");
            assertArrayEquals(point(-74.25, 40.5), geometry.getBinary().getBytes());
            geometry.consume();
            assertEquals(0, geometry.getCurrentDefinitionLevel()); // no latitude: no geometry
        }
    }

    @Test
    void anAggregatesFiguresByShipTypeAreAMapOfGroups() throws IOException {
        String[] names = {"cell", "by_type"};
        String[] types = {"text", GeoParquetRecords.BY_TYPE};
        Path path = new Path(new File(dir, "by-type.parquet").toURI());
        try (FSDataOutputStream out = FileSystem.getLocalFileSystem().create(path, FileSystem.WriteMode.OVERWRITE)) {
            BulkWriter<String> writer = new GeoParquetRecords(names, types, new String[] {"cell", "by_type"}, "CELL").create(out);
            writer.addElement("{\"cell\":\"dr5ru7\",\"by_type\":{\"cargo\":{\"vessels\":2,\"reports\":5,\"vessel_hours\":0.25},"
                    + "\"unknown\":{\"vessels\":1,\"reports\":1,\"vessel_hours\":0.0}}}");
            writer.addElement("{\"cell\":\"dr5ru7\",\"by_type\":{}}");
            writer.finish();
        }
        long length = FileSystem.getLocalFileSystem().getFileStatus(path).getLen();
        try (ParquetFileReader reader = ParquetFileReader.open(
                new NoaaParquet.FlinkInputFile(path, length), PlainReadOptions.of(new ParquetCodecs()))) {
            MessageType schema = reader.getFooter().getFileMetaData().getSchema();
            RecordReader<Group> rows = new ColumnIOFactory().getColumnIO(schema)
                    .getRecordReader(reader.readNextRowGroup(), new GroupRecordConverter(schema));
            Group first = rows.read().getGroup("by_type", 0);
            assertEquals(2, first.getFieldRepetitionCount("key_value"));
            Group cargo = first.getGroup("key_value", 0);
            assertEquals("cargo", cargo.getString("key", 0));
            Group figures = cargo.getGroup("value", 0);
            assertEquals(List.of(2, 5, 0.25), List.of(figures.getInteger("vessels", 0), figures.getInteger("reports", 0),
                    figures.getDouble("vessel_hours", 0)));
            assertEquals("unknown", first.getGroup("key_value", 1).getString("key", 0));
            assertEquals(0, rows.read().getGroup("by_type", 0).getFieldRepetitionCount("key_value")); // empty, not null
        }
        GeoParquetRecords factory = new GeoParquetRecords(names, types, new String[] {"cell", "by_type"}, "CELL");
        Path bad = new Path(new File(dir, "bad.parquet").toURI());
        try (FSDataOutputStream out = FileSystem.getLocalFileSystem().create(bad, FileSystem.WriteMode.OVERWRITE)) {
            BulkWriter<String> writer = factory.create(out);
            assertThrows(IllegalArgumentException.class, () -> writer.addElement(
                    "{\"cell\":\"dr5ru7\",\"by_type\":{\"cargo\":{\"vessels\":2,\"knots\":5}}}")); // a figure it would lose
        }
    }

    @Test
    void anAggregatesCellIsItsGeohashBox() {
        assertArrayEquals(new double[] {-90, -180, -45, -135}, Geohash.bounds("0"));
        double[] dr5 = Geohash.bounds("dr5ru7");
        // pygeohash: 40.75653076171875 +- 0.00274658203125, -73.9874267578125 +- 0.0054931640625
        assertArrayEquals(new double[] {40.7537841796875, -73.992919921875, 40.75927734375, -73.9819335937500}, dr5);
    }

    @Test
    void anUnknownColumnTypeFailsWhenTheJobIsBuilt() {
        assertThrows(IllegalArgumentException.class,
                () -> new GeoParquetRecords(new String[] {"x"}, new String[] {"interval"}, new String[] {"x"}, "NONE"));
        assertEquals(List.of("NONE", "POINT", "CELL", "GAP"),
                java.util.Arrays.stream(GeoParquetRecords.Geometry.values()).map(Enum::name)
                        .collect(java.util.stream.Collectors.toList()));
    }

    private static byte[] point(double x, double y) {
        return ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).putInt(1).putDouble(x).putDouble(y).array();
    }
}
