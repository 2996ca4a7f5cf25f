package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link ExactCopies} against the golden cases shared with the Python reference. */
class ExactCopiesTest {
    static final long MMSI = 244000001L;
    static final RowTypeInfo WIRE_REPORT =
            new RowTypeInfo(
                    new org.apache.flink.api.common.typeinfo.TypeInformation<?>[] {Types.LONG, Types.LONG, Types.STRING},
                    new String[] {"mmsi", "watermark", "packed"});

    static Stream<JsonNode> goldenCases() throws Exception {
        return Golden.cases("exact_copies.json").stream();
    }

    static KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> harness(JsonNode spec) throws Exception {
        ExactCopies copies =
                new ExactCopies(
                        spec.get("ttl_ms").asLong(), spec.get("horizon_ms").asLong(), spec.get("step_ms").asLong(), WIRE_REPORT);
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(copies), new ExactCopies.ByMmsi(), Types.LONG);
    }

    /** A packed report as {@code pack_report} writes it: the NMEA identity is left out when it is payload and fill. */
    static String packed(long ts, int msgType, String identity) {
        String sep = "\u001f";
        int comma = identity.lastIndexOf(',');
        String payload = identity.substring(0, comma);
        String fill = identity.substring(comma + 1);
        return ts + sep + msgType + sep + sep + payload + sep + fill + sep + "r1" + sep + "!AIVDM,...";
    }

    static String step(KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h, JsonNode step) throws Exception {
        h.getOutput().clear();
        if (step.get(0).asText().equals("watermark")) {
            h.processWatermark(new Watermark(step.get(1).asLong()));
            for (Object o : h.getOutput()) {
                if (o instanceof StreamRecord) {
                    throw new AssertionError("a watermark emitted a record: " + o);
                }
            }
            return "null";
        }
        long ts = step.get(1).asLong();
        String packed = packed(ts, step.get(2).asInt(), step.get(3).asText());
        Row report = Row.of(MMSI, 42L, packed);
        h.processElement(new StreamRecord<>(Row.of(MMSI, report), ts));
        List<Row> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord) {
                out.add((Row) ((StreamRecord<?>) o).getValue());
            }
        }
        assertEquals(1, out.size(), "one record a report");
        Row sent = (Row) out.get(0).getField(1);
        assertEquals(MMSI, out.get(0).getField(0));
        assertEquals(MMSI, sent.getField(0));
        assertEquals(42L, sent.getField(1));
        String field = (String) sent.getField(2);
        if (field.equals(ExactCopies.COPY_MARK + Long.toString(ts))) {
            return "copy";
        }
        assertEquals(packed, field, "a report that is not a copy leaves as it came");
        return "new";
    }

    static String expected(JsonNode e) {
        return e.isNull() ? "null" : e.asText();
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceDecisionsAndLeavesNoStateWhenItSaysSo(JsonNode golden) throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h = harness(golden.get("spec"))) {
            h.open();
            goldenSteps(golden, h);
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceDecisionsOnRocksDbToo(JsonNode golden) throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h = harness(golden.get("spec"))) {
            h.setStateBackend(new EmbeddedRocksDBStateBackend());
            h.open();
            goldenSteps(golden, h);
        }
    }

    private static void goldenSteps(JsonNode golden, KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h)
            throws Exception {
        int i = 0;
        for (JsonNode step : golden.get("steps")) {
            assertEquals(expected(golden.get("expect").get(i)), step(h, step), golden.get("name").asText() + ", step " + i);
            i++;
        }
        if (!golden.get("state_left_at_end").asBoolean()) {
            assertEquals(0, keyedStateLeft(h), "keyed state left: " + golden.get("name").asText());
            assertEquals(0, h.numEventTimeTimers(), "timers left: " + golden.get("name").asText());
        } else {
            assertEquals(1, h.numEventTimeTimers(), "one cleanup timer: " + golden.get("name").asText());
        }
    }

    static long keyedStateLeft(KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h) throws Exception {
        try {
            return h.numKeyedStateEntries();
        } catch (UnsupportedOperationException rocksDb) {
            KeyedStateBackend<Long> backend = h.getOperator().getKeyedStateBackend();
            long left = 0;
            for (String state : new String[] {ExactCopies.SEEN_STATE, ExactCopies.IDS_STATE}) {
                try (Stream<Long> keys = backend.getKeys(state, VoidNamespace.INSTANCE)) {
                    left += keys.count();
                }
            }
            return left;
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void restoredFromASnapshotAfterEveryStepTheCaseGivesTheSameDecisions(JsonNode golden) throws Exception {
        List<JsonNode> steps = new ArrayList<>();
        golden.get("steps").forEach(steps::add);
        for (int cut = 1; cut < steps.size(); cut++) {
            OperatorSubtaskState snapshot;
            try (KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h = harness(golden.get("spec"))) {
                h.open();
                for (int i = 0; i < cut; i++) {
                    step(h, steps.get(i));
                }
                snapshot = h.snapshot(1L, 1L);
            }
            try (KeyedOneInputStreamOperatorTestHarness<Long, Row, Row> h = harness(golden.get("spec"))) {
                h.initializeState(snapshot);
                h.open();
                for (int i = cut; i < steps.size(); i++) {
                    assertEquals(
                            expected(golden.get("expect").get(i)),
                            step(h, steps.get(i)),
                            golden.get("name").asText() + ", restored after step " + cut + ", step " + i);
                }
            }
        }
    }

    @Test
    void theIdentityIsTheOwnFieldOrThePayloadWithItsFillBits() {
        String nmea = "1\u001f1\u001f\u001f13u?etPv2;0n\u001f0\u001fr1\u001fraw";
        assertEquals("13u?etPv2;0n,0", ExactCopies.identity(nmea, ExactCopies.separators(nmea)));
        String row = "1\u001f1\u001f244000001|1|52.00000|4.00000\u001f\u001f0\u001fr1\u001fraw";
        assertEquals("244000001|1|52.00000|4.00000", ExactCopies.identity(row, ExactCopies.separators(row)));
    }

    @Test
    void aFieldThatIsNotAPackedReportIsRefusedWhenBuiltWithAnotherLayout() {
        RowTypeInfo other = new RowTypeInfo(new org.apache.flink.api.common.typeinfo.TypeInformation<?>[] {Types.LONG}, new String[] {"mmsi"});
        assertThrows(IllegalArgumentException.class, () -> new ExactCopies(1, 1, 1, other));
    }
}
