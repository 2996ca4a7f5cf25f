package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link GapCoverage} on Flink's keyed two-input test harness, against the golden coverage cases. */
class GapCoverageTest {
    private static final RecordLayout.VesselPane PANE = new RecordLayout.VesselPane(Rows.VESSEL_PANE);

    static Stream<JsonNode> goldenCases() throws Exception {
        return Golden.cases("coverage.json").stream();
    }

    static KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> harness(JsonNode rules) throws Exception {
        GapCoverage coverage =
                new GapCoverage(
                        Rows.VESSEL_PANE,
                        rules.get("lateness_ms").asLong(),
                        rules.get("grace_ms").asLong(),
                        rules.get("reach_ms").asLong(),
                        rules.get("ttl_ms").asLong());
        return new KeyedTwoInputStreamOperatorTestHarness<>(
                new KeyedCoProcessOperator<>(coverage),
                new GapCoverage.PaneCell(Rows.VESSEL_PANE),
                new GapCoverage.GapCell(),
                Types.STRING);
    }

    static Row pane(JsonNode p) {
        Row row = new Row(PANE.arity);
        row.setField(PANE.cell, p.get("cell").asText());
        row.setField(PANE.paneStart, p.get("pane_start").asLong());
        row.setField(PANE.mmsi, p.get("mmsi").asLong());
        row.setField(PANE.reports, p.get("reports").asInt());
        row.setField(PANE.sogMilliSum, 0L);
        row.setField(PANE.sogCount, 0);
        row.setField(PANE.tumbling, p.get("tumbling").asBoolean());
        row.setField(PANE.sliding, true);
        row.setField(PANE.slidingFrom, 0L);
        row.setField(PANE.vesselMs, 0L);
        row.setField(PANE.category, "unknown");
        return row;
    }

    static List<String> step(KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h, JsonNode step)
            throws Exception {
        h.getOutput().clear();
        if (step.has("pane")) {
            JsonNode p = step.get("pane");
            h.processElement1(new StreamRecord<>(pane(p), p.get("pane_start").asLong()));
        } else if (step.has("gap")) {
            h.processElement2(new StreamRecord<>(step.get("gap").asText()));
        } else {
            h.processBothWatermarks(new Watermark(step.get("watermark").asLong()));
        }
        List<String> lines = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord) {
                lines.add((String) ((StreamRecord<?>) o).getValue());
            }
        }
        Collections.sort(lines);
        return lines;
    }

    static List<String> expected(JsonNode step) {
        List<String> lines = new ArrayList<>();
        step.get("emits").forEach(e -> lines.add(e.asText()));
        Collections.sort(lines);
        return lines;
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceRecordsByteForByteAndLeavesNoStateBehind(JsonNode golden) throws Exception {
        try (KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h = harness(golden.get("rules"))) {
            h.open();
            goldenSteps(golden, h);
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceRecordsOnRocksDbToo(JsonNode golden) throws Exception {
        try (KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h = harness(golden.get("rules"))) {
            h.setStateBackend(new EmbeddedRocksDBStateBackend());
            h.open();
            goldenSteps(golden, h);
        }
    }

    private static void goldenSteps(JsonNode golden, KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h)
            throws Exception {
        int i = 0;
        for (JsonNode step : golden.get("steps")) {
            assertEquals(expected(step), step(h, step), golden.get("name").asText() + ", step " + i++);
        }
        if (golden.has("state_left_at_end") && !golden.get("state_left_at_end").asBoolean()) {
            assertEquals(0, keyedStateLeft(h), "keyed state left: " + golden.get("name").asText());
            assertEquals(0, h.numEventTimeTimers(), "timers left: " + golden.get("name").asText());
        }
    }

    /** The keys holding any of the operator's keyed states (the heap backend counts its entries). */
    static long keyedStateLeft(KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h) throws Exception {
        try {
            return h.numKeyedStateEntries();
        } catch (UnsupportedOperationException rocksDb) {
            KeyedStateBackend<String> backend = h.getOperator().getKeyedStateBackend();
            long left = 0;
            for (String state :
                    new String[] {GapCoverage.HOURS_STATE, GapCoverage.WAITING_STATE, GapCoverage.PINNED_STATE}) {
                try (Stream<String> keys = backend.getKeys(state, VoidNamespace.INSTANCE)) {
                    left += keys.count();
                }
            }
            return left;
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void restoredFromASnapshotAfterEveryStepTheCaseGivesTheSameRecords(JsonNode golden) throws Exception {
        List<JsonNode> steps = new ArrayList<>();
        golden.get("steps").forEach(steps::add);
        for (int cut = 1; cut < steps.size(); cut++) {
            OperatorSubtaskState snapshot;
            try (KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h = harness(golden.get("rules"))) {
                h.open();
                for (int i = 0; i < cut; i++) {
                    step(h, steps.get(i));
                }
                snapshot = h.snapshot(1L, 1L);
            }
            try (KeyedTwoInputStreamOperatorTestHarness<String, Row, String, String> h = harness(golden.get("rules"))) {
                h.initializeState(snapshot);
                h.open();
                for (int i = cut; i < steps.size(); i++) {
                    assertEquals(
                            expected(steps.get(i)),
                            step(h, steps.get(i)),
                            golden.get("name").asText() + ", restored after step " + cut + ", step " + i);
                }
            }
        }
    }

    @Test
    void cellsAreNamedByTheirSouthWestCornerAsPythonNamesThem() {
        assertEquals("N54E010", GapCoverage.cellOf(54.3, 10.9));
        assertEquals("S09E060", GapCoverage.cellOf(-8.2, 60.0));
        assertEquals("N00W001", GapCoverage.cellOf(0.5, -0.5));
        assertEquals("S01W180", GapCoverage.cellOf(-0.5, -179.5));
        assertEquals("N89W180", GapCoverage.cellOf(90.0, 180.0));
    }
}
