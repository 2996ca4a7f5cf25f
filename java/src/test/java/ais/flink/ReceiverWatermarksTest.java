package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;

/** {@link ReceiverWatermarks} on Flink's operator test harness: stamps, stepped watermarks, restore. */
class ReceiverWatermarksTest {
    /** WireReport and the parsed batch as udfs/ais_pipeline/functions/rows.py builds them. */
    static final RowTypeInfo REPORT =
            new RowTypeInfo(
                    new TypeInformation<?>[] {Types.LONG, Types.LONG, Types.STRING},
                    new String[] {"mmsi", "watermark", "packed"});
    static final RowTypeInfo PARSED =
            new RowTypeInfo(
                    new TypeInformation<?>[] {
                        BasicArrayTypeInfo.LONG_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.BOOLEAN_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.LONG_ARRAY_TYPE_INFO,
                        BasicArrayTypeInfo.STRING_ARRAY_TYPE_INFO
                    },
                    new String[] {"assigned", "source", "received", "mmsi", "packed"});
    static final OutputTag<String> TALLY = new OutputTag<>("tally", Types.STRING);
    static final long MIN = Long.MIN_VALUE;

    static OneInputStreamOperatorTestHarness<Row, Row> harness() throws Exception {
        // 10 s out-of-orderness, 30 s idle timeout, 300 s clock skew, warm-up 2 lines, consensus 8, 60 s steps.
        return new OneInputStreamOperatorTestHarness<>(
                new ReceiverWatermarks(10_000, 30_000, 300_000, 2, 8, 32, 60_000, -1, PARSED, REPORT, TALLY));
    }

    /** A live lane: 1 s steps, a lag of 1 s behind the wall clock. */
    static OneInputStreamOperatorTestHarness<Row, Row> liveHarness() throws Exception {
        return new OneInputStreamOperatorTestHarness<>(
                new ReceiverWatermarks(10_000, 30_000, 300_000, 2, 8, 32, 1_000, 1_000, PARSED, REPORT, TALLY));
    }

    /**
     * A batch of lines: each {source, time ms, mmsi or null (a line that only moves the clock)},
     * and a fourth value true for a line stamped on receipt.
     */
    static Row batch(Object[]... lines) {
        int n = lines.length;
        Long[] assigned = new Long[n];
        String[] source = new String[n];
        Boolean[] received = new Boolean[n];
        Long[] mmsi = new Long[n];
        String[] packed = new String[n];
        for (int i = 0; i < n; i++) {
            source[i] = (String) lines[i][0];
            assigned[i] = (Long) lines[i][1];
            mmsi[i] = (Long) lines[i][2];
            received[i] = lines[i].length > 3 && (Boolean) lines[i][3];
            if (mmsi[i] != null) {
                packed[i] = assigned[i] + "\u001f" + source[i];
            }
        }
        return Row.of(assigned, source, received, mmsi, packed);
    }

    static Object[] line(String source, long ts, Long mmsi) {
        return new Object[] {source, ts, mmsi};
    }

    static List<String> drain(OneInputStreamOperatorTestHarness<Row, Row> h) {
        List<String> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof Watermark) {
                out.add("watermark " + ((Watermark) o).getTimestamp());
            } else if (o instanceof WatermarkStatus) {
                out.add(((WatermarkStatus) o).isIdle() ? "idle" : "active");
            } else if (o instanceof StreamRecord) {
                Row r = (Row) ((StreamRecord<?>) o).getValue();
                Row report = (Row) r.getField(1);
                out.add("report " + r.getField(0) + " stamped " + report.getField(1));
            }
        }
        h.getOutput().clear();
        return out;
    }

    @Test
    void eachReportIsStampedWithTheWatermarkBeforeItsLineAndWatermarksGoOutInSteps() throws Exception {
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness()) {
            h.open();
            h.getOutput().clear();
            h.processElement(
                    new StreamRecord<>(
                            batch(
                                    line("a", 100_000, 1L),
                                    line("a", 130_000, 2L), // warm-up done: watermark 119,999
                                    line("a", 185_000, null), // a fragment's time: 174,999, out as 119,999
                                    line("a", 190_000, 3L))));
            assertEquals(
                    List.of(
                            "report 1 stamped " + MIN,
                            "report 2 stamped " + MIN,
                            "watermark 119999",
                            "report 3 stamped 174999",
                            "watermark 179999"), // 190,000 - 10 s - 1 ms is a step
                    drain(h));
            h.processWatermark(new Watermark(Long.MAX_VALUE)); // the end of a bounded input goes on
            assertEquals(List.of("watermark " + Long.MAX_VALUE), drain(h));
        }
    }

    @Test
    void aRestoredLaneEmitsItsWatermarkFirstAndGoesOnFromItsClocks() throws Exception {
        OperatorSubtaskState snapshot;
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness()) {
            h.open();
            h.processElement(new StreamRecord<>(batch(line("a", 100_000, 1L), line("a", 250_000, 2L))));
            snapshot = h.snapshot(1, 1);
        }
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness()) {
            h.initializeState(snapshot);
            h.open();
            h.setProcessingTime(1); // the timer registered at open fires: the restored watermark goes out
            assertEquals(List.of("watermark 239999"), drain(h));
            h.processElement(new StreamRecord<>(batch(line("a", 200_000, 3L))));
            assertEquals(List.of("report 3 stamped 239999"), drain(h));
        }
    }

    @Test
    void aLineFarAheadOfTheOtherReceiversIsCountedForItsReceiver() throws Exception {
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness()) {
            h.open();
            h.processElement(
                    new StreamRecord<>(
                            batch(
                                    line("a", 100_000, 1L),
                                    line("b", 101_000, 2L),
                                    line("fast", 100_000 + 5 * 3600_000L, 3L),
                                    line("a", 102_000, 4L))));
            List<String> tallies = new ArrayList<>();
            for (StreamRecord<String> r : h.getSideOutput(TALLY)) {
                tallies.add(r.getValue());
            }
            assertEquals(List.of("by_receiver#clock_ahead#fast"), tallies);
        }
    }

    @Test
    void aDrainAfterTheLaneWentIdleReachesDownstreamAsActive() throws Exception {
        // A live feed quiet for the idle timeout, then Ctrl-C: the drain's final watermark must
        // not come from an idle input, which every operator downstream would ignore.
        try (OneInputStreamOperatorTestHarness<Row, Row> h = harness()) {
            h.open();
            h.processElement(new StreamRecord<>(batch(line("a", 100_000, 1L), line("a", 130_000, 2L))));
            h.setProcessingTime(31_000);
            assertEquals(List.of("report 1 stamped " + MIN, "report 2 stamped " + MIN, "watermark 119999", "idle"), drain(h));
            h.processWatermark(new Watermark(Long.MAX_VALUE));
            assertEquals(List.of("active", "watermark " + Long.MAX_VALUE), drain(h));
        }
    }

    @Test
    void aLiveLaneFollowsItsStampedLinesAndThroughASilenceTheWallClockInSecondSteps() throws Exception {
        try (OneInputStreamOperatorTestHarness<Row, Row> h = liveHarness()) {
            h.open();
            h.setProcessingTime(100_000); // no line stamped on receipt yet: the clock is not read
            assertEquals(List.of("idle"), drain(h));
            h.processElement(
                    new StreamRecord<>(
                            batch(
                                    new Object[] {"udp", 99_700L, 1L, true},
                                    new Object[] {"udp", 100_050L, 2L, true},
                                    new Object[] {"udp", 100_050L, 3L, true})));
            // No warm-up and no out-of-orderness: each report is stamped with its predecessor's
            // time less 1 ms, and the watermark goes out in 1 s steps.
            assertEquals(
                    List.of(
                            "active",
                            "report 1 stamped " + MIN,
                            "watermark 98999",
                            "report 2 stamped 99699",
                            "watermark 99999",
                            "report 3 stamped 100049"),
                    drain(h));
            h.setProcessingTime(100_500); // quiet for less than the lag: nothing moves
            assertEquals(List.of(), drain(h));
            h.setProcessingTime(103_000); // quiet: the wall clock less the lag
            assertEquals(List.of("watermark 101999"), drain(h));
            h.setProcessingTime(400_000); // five minutes of silence: nothing is held after it
            assertEquals(List.of("watermark 398999"), drain(h));
            h.processElement(new StreamRecord<>(batch(new Object[] {"udp", 399_950L, 4L, true})));
            assertEquals(List.of("report 4 stamped 398999"), drain(h));
            h.setProcessingTime(500_000); // quiet again: the lane never goes idle, it follows the clock
            assertEquals(List.of("watermark 498999"), drain(h));
        }
    }
}
