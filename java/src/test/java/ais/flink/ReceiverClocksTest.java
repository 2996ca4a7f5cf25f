package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link ReceiverClocks} against the golden watermark cases shared with the Python reference. */
class ReceiverClocksTest {
    static Stream<JsonNode> goldenCases() throws Exception {
        return Golden.cases("watermarks.json").stream();
    }

    static ReceiverClocks clocks(JsonNode s) {
        return new ReceiverClocks(
                s.get("out_of_orderness_ms").asLong(),
                s.get("idle_timeout_ms").asLong(),
                s.get("max_clock_skew_ms").asLong(),
                s.get("consensus_lines").asInt(),
                s.get("warm_up_lines").asInt(),
                s.get("jump_lines").asInt(),
                s.has("received_lag_ms") ? s.get("received_lag_ms").asLong() : -1);
    }

    static String step(ReceiverClocks clocks, JsonNode line) {
        long ts = line.get(1).isNull() ? ReceiverClocks.TIME_UNKNOWN : line.get(1).asLong();
        String before = clocks.watermark == ReceiverClocks.TIME_UNKNOWN ? "null" : Long.toString(clocks.watermark);
        int flag;
        if (line.get(0).asText().equals("@clock")) {
            clocks.tick(ts);
            flag = ReceiverClocks.NONE;
        } else if (line.size() > 2 && line.get(2).asText().equals("received")) {
            flag = clocks.observeReceived(line.get(0).asText(), ts);
        } else {
            flag = clocks.observe(line.get(0).asText(), ts);
        }
        String name = flag == ReceiverClocks.AHEAD ? "clock_ahead" : flag == ReceiverClocks.BEHIND ? "clock_behind" : "null";
        return before + " " + name;
    }

    static String expected(JsonNode e) {
        return (e.get(0).isNull() ? "null" : Long.toString(e.get(0).asLong())) + " " + (e.get(1).isNull() ? "null" : e.get(1).asText());
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void goldenCaseGivesTheReferenceWatermarksAndFlags(JsonNode golden) {
        ReceiverClocks clocks = clocks(golden.get("spec"));
        List<String> got = new ArrayList<>();
        List<String> want = new ArrayList<>();
        for (int i = 0; i < golden.get("lines").size(); i++) {
            got.add(step(clocks, golden.get("lines").get(i)));
            want.add(expected(golden.get("expect").get(i)));
        }
        assertEquals(want, got, golden.get("name").asText());
    }

    @ParameterizedTest(name = "{index}")
    @MethodSource("goldenCases")
    void restoredFromItsStateAfterEveryLineTheLaneGoesOnAsIfUninterrupted(JsonNode golden) {
        int n = golden.get("lines").size();
        for (int cut = 1; cut < n; cut++) {
            ReceiverClocks first = clocks(golden.get("spec"));
            for (int i = 0; i < cut; i++) {
                step(first, golden.get("lines").get(i));
            }
            ReceiverClocks restored = clocks(golden.get("spec"));
            restored.restore(first.snapshot(0, 1));
            for (int i = cut; i < n; i++) {
                assertEquals(
                        expected(golden.get("expect").get(i)),
                        step(restored, golden.get("lines").get(i)),
                        golden.get("name").asText() + ", restored after line " + cut + ", line " + i);
            }
        }
    }

    @Test
    void theConsensusIsTheLowerMedianOfTheRecentLines() {
        ReceiverClocks clocks = new ReceiverClocks(0, 1000, 1000, 4, 1, 32);
        for (long ts : new long[] {50, 10, 40, 20, 30}) {
            clocks.observe("a", ts);
        }
        // The last 4: 10, 40, 20, 30 -> sorted 10 20 30 40 -> lower median 20.
        assertEquals(20, clocks.consensus());
    }
}
