package ais.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;

import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.streaming.api.operators.StreamMap;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link FastSentences} against the golden cases of the Python reference, and on Flink's test harness. */
class FastSentencesTest {
    /** LaneBatch as udfs/ais_pipeline/functions/rows.py builds it. */
    static final RowTypeInfo BATCH =
            new RowTypeInfo(
                    new TypeInformation<?>[] {
                        BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.INT_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.INT_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.LONG_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.BOOLEAN_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.LONG_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO,
                        Types.INT
                    },
                    new String[] {
                        "lines", "line_at", "fast_at", "assigned", "source", "received", "mmsi", "packed", "total"
                    });

    static final String PLAIN = "\\s:117,c:1668046497*0A\\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12";
    static final String FRAGMENT =
            "\\g:1-2-7218,s:117,c:1668046497*74\\!AIVDM,2,1,9,,5815Njh2Bah1KL7CGG<HUHu>2222222222222216D@LB>6jm0@CSmSlS,0*62";

    static Stream<JsonNode> cases() throws Exception {
        return Golden.cases("fast_sentences.json").stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void parsesExactlyThePlainSentencesThePythonReferenceGivesTheGoldenEntryFor(JsonNode c) throws Exception {
        long now = Golden.load("fast_sentences.json").get("now_ms").asLong();
        FastSentences.Entry entry = new FastSentences.Entry();
        boolean fast = FastSentences.parse(c.get("line").asText(), now, entry);
        JsonNode want = c.get("entry");
        assertEquals(!want.isNull(), fast, c.get("name").asText());
        if (fast) {
            assertEquals(want.get("assigned").asLong(), entry.assigned);
            assertEquals(want.get("source").asText(), entry.source);
            assertEquals(want.has("received") && want.get("received").asBoolean(), entry.received);
            assertEquals(want.get("mmsi").asLong(), entry.mmsi);
            assertEquals(want.get("packed").asText(), entry.packed);
        }
    }

    static OneInputStreamOperatorTestHarness<Row, Row> harness(boolean enabled) throws Exception {
        return new OneInputStreamOperatorTestHarness<>(new StreamMap<>(new FastSentences(BATCH, enabled)));
    }

    static Row only(OneInputStreamOperatorTestHarness<Row, Row> h, String... lines) throws Exception {
        h.getOutput().clear();
        h.processElement(Row.of(7, lines), 0);
        assertEquals(1, h.extractOutputValues().size());
        Row out = h.extractOutputValues().get(0);
        assertEquals(7, out.getField(0));
        return (Row) out.getField(1);
    }

    @Test
    void aBatchSplitsIntoPythonsLinesAndJavasEntriesEachWithItsPlace() throws Exception {
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.open();
            Row b = only(h, "# a comment", PLAIN, FRAGMENT, PLAIN);
            assertArrayEquals(new String[] {"# a comment", FRAGMENT}, (String[]) b.getField(0));
            assertArrayEquals(new Integer[] {0, 2}, (Integer[]) b.getField(1));
            assertArrayEquals(new Integer[] {1, 3}, (Integer[]) b.getField(2));
            assertArrayEquals(new Long[] {1668046497000L, 1668046497000L}, (Long[]) b.getField(3));
            assertArrayEquals(new String[] {"117", "117"}, (String[]) b.getField(4));
            assertArrayEquals(new Boolean[] {false, false}, (Boolean[]) b.getField(5));
            assertArrayEquals(new Long[] {412549006L, 412549006L}, (Long[]) b.getField(6));
            assertEquals(4, b.getField(8));
        }
    }

    @Test
    void withTheFastPathOffEveryLineIsPythons() throws Exception {
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(false)) {
            h.open();
            Row b = only(h, PLAIN, PLAIN);
            assertArrayEquals(new Integer[] {0, 1}, (Integer[]) b.getField(1));
            assertEquals(0, ((Integer[]) b.getField(2)).length);
        }
    }

    @Test
    void aGatehouseTimeOrAnArchiveHeaderTurnsTheLaneOffForGoodAcrossARestore() throws Exception {
        for (String turning : new String[] {"$PGHP,1,2022,11,10,2,14,57,0,219,219,1,*1A", "MMSI,BaseDateTime,LAT,LON"}) {
            OperatorSubtaskState snapshot;
            try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
                h.open();
                assertEquals(1, ((Integer[]) only(h, PLAIN).getField(2)).length);
                Row b = only(h, PLAIN, turning, PLAIN);
                assertArrayEquals(new Integer[] {0}, (Integer[]) b.getField(2), turning);
                assertArrayEquals(new Integer[] {1, 2}, (Integer[]) b.getField(1), turning);
                snapshot = h.snapshot(1, 1);
            }
            try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
                h.initializeState(snapshot);
                h.open();
                assertEquals(0, ((Integer[]) only(h, PLAIN).getField(2)).length, turning);
            }
        }
    }

    @Test
    void aLaneThatShowedNeitherStaysOnAcrossARestore() throws Exception {
        OperatorSubtaskState snapshot;
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.open();
            only(h, "$GPGGA,1*00", PLAIN);
            snapshot = h.snapshot(1, 1);
        }
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.initializeState(snapshot);
            h.open();
            assertEquals(1, ((Integer[]) only(h, PLAIN).getField(2)).length);
        }
    }

    @Test
    void aLaneSeenWithTheFastPathOffIsRememberedForARunWithItOn() throws Exception {
        OperatorSubtaskState snapshot;
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(false)) {
            h.open();
            only(h, "$PGHP,1,2022,11,10,2,14,57,0,219,219,1,*1A");
            snapshot = h.snapshot(1, 1);
        }
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.initializeState(snapshot);
            h.open();
            assertEquals(0, ((Integer[]) only(h, PLAIN).getField(2)).length);
        }
    }

    @Test
    void aJobRestoredFromStateWithoutThisOperatorsLeavesEveryLineToPython() throws Exception {
        OperatorSubtaskState other;
        try (OneInputStreamOperatorTestHarness<Row, Row> h =
                new OneInputStreamOperatorTestHarness<>(new StreamMap<Row, Row>(r -> r))) {
            h.open();
            other = h.snapshot(1, 1);
        }
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.initializeState(other);
            h.open();
            assertEquals(0, ((Integer[]) only(h, PLAIN).getField(2)).length);
        }
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness(true)) {
            h.open(); // a fresh start
            assertEquals(1, ((Integer[]) only(h, PLAIN).getField(2)).length);
        }
    }

    @Test
    void theLanesTurningLinesAreNamed() {
        assertTrue(FastSentences.turnsLaneOff("$PGHP,1,2022,11,10,2,14,57,0,219,219,1,*1A"));
        assertTrue(FastSentences.turnsLaneOff("\"mmsi\";\"# Timestamp\""));
        assertTrue(FastSentences.turnsLaneOff("MMSI,BaseDateTime,LAT,LON"));
        assertTrue(FastSentences.turnsLaneOff("mmsi,base_date_time,latitude,longitude"));
        assertFalse(FastSentences.turnsLaneOff(PLAIN));
        // A payload may spell MMSI: that alone is no header.
        assertFalse(FastSentences.turnsLaneOff("\\s:shore5,c:1767226494*62\\!AIVDM,1,1,,A,15N?hHgP2f0BkopMMSIaQ7V1P000,0*0C"));
    }

    @Test
    void aBatchTypeWithoutAColumnFailsWhenTheJobIsBuilt() {
        RowTypeInfo missing =
                new RowTypeInfo(
                        new TypeInformation<?>[] {BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO},
                        new String[] {"lines"});
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new FastSentences(missing, true));
        assertTrue(e.getMessage().contains("line_at"), e.getMessage());
    }
}
