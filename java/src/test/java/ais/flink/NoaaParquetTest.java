package ais.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * {@link NoaaParquet} apart from the golden lines ({@link GoldenArchivesTest} holds it to them):
 * a restored reader gives the rest of a file's lines from any line, whole row groups skipped
 * unread; a value's text as the Python reference writes it ({@code tests/unit/test_geoparquet.py}
 * checks the same cases there); and no Hadoop class on the classpath (the tests run without it,
 * as the job does in the PyFlink package).
 */
class NoaaParquetTest {
    private static final File DIR = new File(System.getProperty("golden.dir", "../tests/golden"), "archives");

    @Test
    void aRestoredReaderGivesTheRestOfTheLinesFromAnyLine() throws IOException {
        String name = "noaa-day.parquet"; // 19 rows in row groups of 5
        JsonNode golden = Golden.load("archives.json").get("cases").get(name);
        List<String> all = GoldenArchivesTest.expected(name, golden);
        assertEquals(20, all.size());
        for (int skip = 1; skip <= all.size(); skip++) {
            assertEquals(all.subList(skip, all.size()), ArchiveLinesTest.read(new File(DIR, name).toPath(), skip), "skip " + skip);
        }
    }

    @Test
    void aFloatIsTheShortestDecimalThatReadsBackAsIt() {
        assertEquals("12.3", NoaaParquet.number(12.3f, true));
        assertEquals("359.9", NoaaParquet.number(359.9f, true));
        assertEquals("123456790", NoaaParquet.number(123456789f, true));
        assertEquals("0.0000001", NoaaParquet.number(1e-7f, true));
        assertEquals("340282350000000000000000000000000000000", NoaaParquet.number(Float.MAX_VALUE, true));
        assertEquals("0.1", NoaaParquet.number(0.1, false));
        assertEquals("-74.01234", NoaaParquet.number(-74.01234, false));
        assertEquals("0.0000000001", NoaaParquet.number(1e-10, false));
        assertEquals("89.99999999999999", NoaaParquet.number(89.99999999999999, false));
        assertEquals("10000000000000000000000", NoaaParquet.number(1e22, false));
        assertEquals("0", NoaaParquet.number(-0.0, false));
        assertEquals("", NoaaParquet.number(Float.NaN, true));
        assertEquals("-inf", NoaaParquet.number(Double.NEGATIVE_INFINITY, false));
    }

    @Test
    void aTimeIsUtcWithItsMillisecondsAndOutOfRangeAsItsNumber() {
        assertEquals("2024-01-01 00:00:00", NoaaParquet.time(1704067200000L, "ms"));
        assertEquals("2024-01-01 00:00:00.123", NoaaParquet.time(1704067200123456L, "us"));
        assertEquals("2024-01-01 00:00:00.123", NoaaParquet.time(1704067200123999999L, "ns"));
        assertEquals("1969-12-31 23:59:59.999", NoaaParquet.time(-1, "ms"));
        assertEquals("0001-01-01 00:00:00", NoaaParquet.time(-62135596800000L, "ms"));
        assertEquals("-62135596800001ms", NoaaParquet.time(-62135596800001L, "ms"));
    }

    private static byte[] point(ByteOrder order, int type, double... coordinates) {
        ByteBuffer b = ByteBuffer.allocate(5 + 8 * coordinates.length).order(order);
        b.put((byte) (order == ByteOrder.LITTLE_ENDIAN ? 1 : 0)).putInt(type);
        for (double c : coordinates) {
            b.putDouble(c);
        }
        return b.array();
    }

    @Test
    void wkbPointsInEveryFlavourAndWhatIsNotOne() {
        String[] point = {"-74.5", "40.25", ""};
        assertArrayEquals(point, NoaaParquet.wkbPoint(point(ByteOrder.LITTLE_ENDIAN, 1, -74.5, 40.25)));
        assertArrayEquals(point, NoaaParquet.wkbPoint(point(ByteOrder.BIG_ENDIAN, 1, -74.5, 40.25)));
        assertArrayEquals(point, NoaaParquet.wkbPoint(point(ByteOrder.LITTLE_ENDIAN, 1001, -74.5, 40.25, 3)));
        assertArrayEquals(new String[] {"", "", ""},
                NoaaParquet.wkbPoint(point(ByteOrder.LITTLE_ENDIAN, 1, Double.NaN, Double.NaN)));
        assertArrayEquals(new String[] {"", "", "a WKB geometry of type 2, not a point"},
                NoaaParquet.wkbPoint(point(ByteOrder.LITTLE_ENDIAN, 2, 0)));
        assertArrayEquals(new String[] {"", "", "WKB of 3 bytes"}, NoaaParquet.wkbPoint(new byte[] {1, 1, 0}));
    }

    @Test
    void noHadoopClassIsOnTheTestsClasspath() {
        boolean found;
        try {
            Class.forName("org.apache.hadoop.conf.Configuration");
            found = true;
        } catch (ClassNotFoundException e) {
            found = false;
        }
        assertEquals(false, found);
    }
}
