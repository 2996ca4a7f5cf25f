package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link CellWindows} on Flink's keyed operator test harness, against the golden window cases. */
class CellWindowsTest {
    private static final RecordLayout.Aggregate AGG = new RecordLayout.Aggregate(Rows.AGGREGATE);
    private static final RecordLayout.VesselPane PANE = new RecordLayout.VesselPane(Rows.VESSEL_PANE);

    static Stream<JsonNode> goldenCases() throws Exception {
        return Golden.cases("windows.json").stream();
    }

    /** Whether a case's spec computes a window kind (its {@code kinds}; both when it has none). */
    static boolean computes(JsonNode spec, String kind) {
        if (!spec.has("kinds")) {
            return true;
        }
        for (JsonNode k : spec.get("kinds")) {
            if (k.asText().equals(kind)) {
                return true;
            }
        }
        return false;
    }

    static KeyedOneInputStreamOperatorTestHarness<String, Row, Row> harness(JsonNode spec) throws Exception {
        CellWindows windows =
                new CellWindows(
                        new WindowSpec(
                                spec.get("window_ms").asLong(),
                                spec.get("slide_size_ms").asLong(),
                                spec.get("slide_ms").asLong(),
                                spec.get("lateness_ms").asLong(),
                                spec.has("grace_ms") ? spec.get("grace_ms").asLong() : 0,
                                computes(spec, CellWindows.TUMBLING),
                                computes(spec, CellWindows.SLIDING)),
                        Rows.VESSEL_PANE,
                        Rows.AGGREGATE,
                        Rows.CATEGORIES);
        KeySelector<Row, String> byCell = row -> (String) row.getField(PANE.cell);
        return new KeyedOneInputStreamOperatorTestHarness<>(windows.operator(), byCell, Types.STRING);
    }

    static KeyedOneInputStreamOperatorTestHarness<String, Row, Row> opened(JsonNode spec) throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness(spec);
        h.open();
        return h;
    }

    static Row contribution(JsonNode c) {
        Row row = new Row(PANE.arity);
        row.setField(PANE.cell, c.get("cell").asText());
        row.setField(PANE.paneStart, c.get("pane_start").asLong());
        row.setField(PANE.mmsi, c.get("mmsi").asLong());
        row.setField(PANE.reports, c.get("reports").asInt());
        row.setField(PANE.sogMilliSum, c.get("sog_milli_sum").asLong());
        row.setField(PANE.sogCount, c.get("sog_count").asInt());
        row.setField(PANE.tumbling, c.get("tumbling").asBoolean());
        row.setField(PANE.sliding, c.get("sliding").asBoolean());
        row.setField(PANE.slidingFrom, c.get("sliding_from").asLong());
        row.setField(PANE.vesselMs, c.has("vessel_ms") ? c.get("vessel_ms").asLong() : 0L);
        row.setField(PANE.category, c.has("category") ? c.get("category").asText() : "unknown");
        return row;
    }

    /** Runs one step; returns what it emitted, as JSON lines sorted (a step's output is a set). */
    static List<String> step(KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h, JsonNode step, long slideMillis)
            throws Exception {
        h.getOutput().clear();
        if (step.has("contribution")) {
            JsonNode c = step.get("contribution");
            h.processElement(new StreamRecord<>(contribution(c), c.get("pane_start").asLong()));
        } else {
            h.processWatermark(new Watermark(step.get("watermark").asLong()));
        }
        List<String> lines = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord) {
                lines.add(AggregateJson.format((Row) ((StreamRecord<?>) o).getValue(), AGG, slideMillis));
            }
        }
        Collections.sort(lines);
        return lines;
    }

    static List<String> expected(JsonNode step) throws Exception {
        List<String> lines = new ArrayList<>();
        for (JsonNode e : step.get("emits")) {
            lines.add(Golden.JSON.writeValueAsString(e));
        }
        Collections.sort(lines);
        return lines;
    }

    static long slide(JsonNode golden) {
        return golden.get("spec").get("slide_ms").asLong();
    }

    /** The golden JSON, reparsed, so both sides compare as parsed values, not text. */
    static List<JsonNode> parsed(List<String> lines) throws Exception {
        List<JsonNode> nodes = new ArrayList<>();
        for (String line : lines) {
            nodes.add(Golden.JSON.readTree(line));
        }
        nodes.sort((a, b) -> a.toString().compareTo(b.toString()));
        return nodes;
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceAggregatesAndLeavesNoStateBehind(JsonNode golden) throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = opened(golden.get("spec"))) {
            goldenSteps(golden, h);
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceAggregatesOnRocksDbToo(JsonNode golden) throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness(golden.get("spec"))) {
            h.setStateBackend(new EmbeddedRocksDBStateBackend());
            h.open();
            goldenSteps(golden, h);
        }
    }

    private static void goldenSteps(JsonNode golden, KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h)
            throws Exception {
        {
            int i = 0;
            for (JsonNode step : golden.get("steps")) {
                assertEquals(
                        parsed(expected(step)),
                        parsed(step(h, step, slide(golden))),
                        golden.get("name").asText() + ", step " + i);
                if (step.has("timers_pending")) {
                    assertEquals(
                            step.get("timers_pending").asInt(),
                            h.numEventTimeTimers(),
                            golden.get("name").asText() + ", timers pending after step " + i);
                }
                i++;
            }
            if (golden.has("state_left_at_end") && !golden.get("state_left_at_end").asBoolean()) {
                assertEquals(0, keyedStateLeft(h), "keyed state left: " + golden.get("name").asText());
            assertEquals(0, cellsHeld(h), "cells_held at the end: " + golden.get("name").asText());
                assertEquals(0, h.numEventTimeTimers(), "timers left: " + golden.get("name").asText());
            }
        }
    }

    /** The {@code cells_held} gauge's value. */
    static long cellsHeld(KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h) {
        return ((CellWindows) ((CellWindows.Operator) h.getOperator()).getUserFunction()).cellsHeld;
    }

    /** The keys holding any of the operator's keyed states (the heap backend counts its entries). */
    static long keyedStateLeft(KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h) throws Exception {
        try {
            return h.numKeyedStateEntries();
        } catch (UnsupportedOperationException rocksDb) {
            KeyedStateBackend<String> backend = h.getOperator().getKeyedStateBackend();
            long left = 0;
            for (String state : new String[] {
                CellWindows.PANES_STATE,
                CellWindows.REVISIONS_STATE,
                CellWindows.PANE_STARTS_STATE,
                CellWindows.REVISIONS_HELD_STATE
            }) {
                try (Stream<String> keys = backend.getKeys(state, VoidNamespace.INSTANCE)) {
                    left += keys.count();
                }
            }
            return left;
        }
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void restoredFromASnapshotAfterEveryStepTheCaseGivesTheSameAggregates(JsonNode golden) throws Exception {
        List<JsonNode> steps = new ArrayList<>();
        golden.get("steps").forEach(steps::add);
        for (int cut = 1; cut < steps.size(); cut++) {
            OperatorSubtaskState snapshot;
            long cellsBefore;
            try (KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness(golden.get("spec"))) {
                h.open();
                for (int i = 0; i < cut; i++) {
                    step(h, steps.get(i), slide(golden));
                }
                snapshot = h.snapshot(1L, 1L);
                cellsBefore = cellsHeld(h);
            }
            try (KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness(golden.get("spec"))) {
                h.initializeState(snapshot);
                h.open();
                assertEquals(cellsBefore, cellsHeld(h), golden.get("name").asText() + ", cells after step " + cut);
                // A restored operator's watermark starts from nothing: the contributions that
                // come first are judged against the highest one seen before the snapshot.
                for (int i = cut; i < steps.size(); i++) {
                    assertEquals(
                            parsed(expected(steps.get(i))),
                            parsed(step(h, steps.get(i), slide(golden))),
                            golden.get("name").asText() + ", restored after step " + cut + ", step " + i);
                }
            }
        }
    }

    @Test
    void aFieldRenamedOnThePythonSideFailsWhenTheJobIsBuiltNamingTheField() {
        RowTypeInfo renamed =
                new RowTypeInfo(
                        Rows.VESSEL_PANE.getFieldTypes(),
                        Stream.of(Rows.VESSEL_PANE.getFieldNames())
                                .map(n -> n.equals("sog_count") ? "sog_n" : n)
                                .toArray(String[]::new));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> new CellWindows(new WindowSpec(60000, 900000, 60000, 120000), renamed, Rows.AGGREGATE, Rows.CATEGORIES));
        assertEquals(true, e.getMessage().contains("'sog_count'"), e.getMessage());
    }

    @Test
    void aFieldRetypedOnThePythonSideFails() {
        TypeInformation<?>[] types = Rows.AGGREGATE.getFieldTypes().clone();
        types[6] = Types.FLOAT;
        RowTypeInfo retyped = new RowTypeInfo(types, Rows.AGGREGATE.getFieldNames());
        assertThrows(
                IllegalArgumentException.class,
                () -> new CellWindows(new WindowSpec(60000, 900000, 60000, 120000), Rows.VESSEL_PANE, retyped, Rows.CATEGORIES));
    }
}
