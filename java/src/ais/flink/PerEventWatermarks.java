package ais.flink;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Bounded out-of-orderness watermarks emitted on the event that moves them, not on a processing-time
 * timer: the same input in the same order always yields the same watermarks, so late decisions and
 * window revisions are reproducible (Flink's built-in generator emits every 200 ms of wall clock).
 * Timestamps of Long.MIN_VALUE ("no event time") never move the watermark.
 */
public final class PerEventWatermarks {
    private PerEventWatermarks() {}

    public static <T> WatermarkStrategy<T> boundedOutOfOrderness(long outOfOrdernessMillis) {
        return WatermarkStrategy.forGenerator(ctx -> new Generator<T>(outOfOrdernessMillis));
    }

    static final class Generator<T> implements WatermarkGenerator<T> {
        private final long outOfOrderness;
        private long maxTimestamp = Long.MIN_VALUE;
        private long emitted = Long.MIN_VALUE;

        Generator(long outOfOrdernessMillis) {
            this.outOfOrderness = outOfOrdernessMillis;
        }

        @Override
        public void onEvent(T event, long eventTimestamp, WatermarkOutput output) {
            if (eventTimestamp == Long.MIN_VALUE || eventTimestamp <= maxTimestamp) {
                return;
            }
            maxTimestamp = eventTimestamp;
            long watermark = maxTimestamp - outOfOrderness - 1;
            if (watermark > emitted) {
                emitted = watermark;
                output.emitWatermark(new Watermark(watermark));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            // Everything is emitted on events; idleness is handled by Flink's wrapper.
        }
    }
}
