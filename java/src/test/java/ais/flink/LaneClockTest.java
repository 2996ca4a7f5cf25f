package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkAlignmentParams;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/** {@link LaneClock}: the times raw lines carry, the pacing watermark, and its alignment. */
class LaneClockTest {
    static final long UNKNOWN = ReceiverClocks.TIME_UNKNOWN;

    static long[] time(String line, String receiver) {
        long[] t = {UNKNOWN};
        assertEquals(receiver, LaneClock.timeOf(line, t));
        return t;
    }

    @Test
    void aTagBlocksTimeAndReceiverAreRead() {
        // The bundled sample's first line (tag block c: in seconds, s: the receiver).
        String line = "\\s:117,c:1668046497*0A\\!AIVDM,1,1,,,369KwSP000<G`Kh0iukScOv00000,0*12";
        assertEquals(1_668_046_497_000L, time(line, "117")[0]);
        assertEquals(1_668_046_497_123L, time("\\c:1668046497123,s:r1*00\\!AIVDM,1,1,,,x,0*00", "r1")[0]);
        assertEquals(UNKNOWN, time("\\g:1-2-7218,s:117*74\\!AIVDM,2,1,9,,58,0*62", "117")[0]);
    }

    @Test
    void anArchiveRowsTimeIsRead() {
        String noaa = "367000001,2025-01-01T00:00:03,-73.9,40.5,0.0,0.0,511,NAME,,,,,,,,,A";
        assertEquals(1_735_689_603_000L, time(noaa, "")[0]);
        assertEquals(1_735_689_603_000L, time("367000001,2025-01-01 00:00:03,-73.9,40.5", "")[0]);
        // A DMA row (tests/fixtures/mobiml__test_aisdk_20180208_sample.csv): an index, then the time.
        String dma = "60,08/02/2018 00:00:00,Class A,265177000,57.602225,11.644943,Under way using engine";
        assertEquals(1_518_048_000_000L, time(dma, "")[0]);
    }

    @Test
    void aLoggersLeadingTimeIsReadAndATagBlocksTimeWinsOverIt() {
        // go-ais test data (BertoldVdb/go-ais, aisnmea/testdata/aistest.nmea): unix nanoseconds.
        String goais = "1550303566167726840 !AIVDM,1,1,,B,10bb7q@P0lPGHlVMhbl0Qgw>2>`<,0*7F";
        assertEquals(1_550_303_566_167L, time(goais, "")[0]);
        assertEquals(1_550_303_566_000L, time("1550303566;!AIVDM,1,1,,B,1,0*00", "")[0]);
        assertEquals(1_550_303_000_000L, time("1550303566167 \\s:r9,c:1550303000*00\\!AIVDM,1,1,,B,1,0*00", "r9")[0]);
        assertEquals(UNKNOWN, time("42 !AIVDM,1,1,,B,1,0*00", "")[0]);
    }

    @Test
    void linesWithoutATimeLeaveItUnknown() {
        for (String line : new String[] {
            "!AIVDM,1,1,,A,15M67FC000G?ufbE`FepT@3n00Sa,0*5C",
            "# Timestamp,Type of mobile,MMSI,Latitude",
            "MMSI,BaseDateTime,LAT,LON",
            "367000001,2025-13-01T00:00:03,-73.9",
            "",
            "\\unterminated",
        }) {
            assertEquals(UNKNOWN, time(line, "")[0], line);
        }
    }

    static final class Collected implements WatermarkOutput {
        final List<Long> marks = new ArrayList<>();

        @Override
        public void emitWatermark(Watermark watermark) {
            marks.add(watermark.getTimestamp());
        }

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}
    }

    @Test
    void thePacingWatermarkFollowsTheReceiversAsTheJobsWatermarksDo() {
        // 10 s out-of-orderness, 30 s idle timeout, 300 s skew, consensus 8, warm-up 2.
        LaneClock clock = new LaneClock(new ReceiverClocks(10_000, 30_000, 300_000, 8, 2, 32));
        Collected out = new Collected();
        clock.onEvent("\\s:a,c:1000*00\\!AIVDM", 0, out);
        clock.onPeriodicEmit(out);
        assertEquals(List.of(), out.marks); // warming up
        clock.onEvent("\\s:b,c:1005*00\\!AIVDM", 0, out);
        clock.onEvent("\\s:a,c:1020*00\\!AIVDM", 0, out);
        clock.onEvent("\\s:a,c:99999*00\\!AIVDM", 0, out); // one clock far ahead moves nothing
        clock.onPeriodicEmit(out);
        clock.onPeriodicEmit(out); // nothing new: nothing emitted
        assertEquals(List.of(1_005_000L - 10_000 - 1), out.marks); // the oldest current receiver, b
    }

    @Test
    void fileLanesAreAlignedInOneGroup() {
        WatermarkStrategy<String> strategy = OrderedFiles.alignedLanes(10_000, 30_000, 300_000, 8, 2, 32, 600_000, 1000);
        WatermarkAlignmentParams params = strategy.getAlignmentParameters();
        assertTrue(params.isEnabled());
        assertEquals("file-lanes", params.getWatermarkGroup());
        assertEquals(600_000, params.getMaxAllowedWatermarkDrift());
        assertEquals(1000, params.getUpdateInterval());
    }

    @Test
    void lineBatchesStopTheSourcesPacingWatermarksAndPassTheFinalOne() throws Exception {
        try (OneInputStreamOperatorTestHarness<String, Row> h =
                new OneInputStreamOperatorTestHarness<>(new LineBatches(1024, 250))) {
            h.open();
            h.processElement(new StreamRecord<>("a"));
            h.processWatermark(new org.apache.flink.streaming.api.watermark.Watermark(5000));
            assertEquals(0, h.getOutput().size()); // not even a flush: the batch is held on
            h.processWatermark(org.apache.flink.streaming.api.watermark.Watermark.MAX_WATERMARK);
            assertEquals(2, h.getOutput().size()); // the batch, then the final watermark
            assertEquals(
                    org.apache.flink.streaming.api.watermark.Watermark.MAX_WATERMARK,
                    new ArrayList<>(h.getOutput()).get(1));
        }
    }
}
