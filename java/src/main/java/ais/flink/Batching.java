package ais.flink;

import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * What the batching operators share ({@link LineBatches}, {@link KeyedBatches}): records are held
 * until {@code maxRecords} are, until {@code maxDelayMillis} of wall clock have passed since the
 * first one (a quiet stream is not held back), and never across a watermark, a watermark status,
 * a checkpoint barrier or the end of the input: {@link #flush()} sends them on before any of
 * these. Nothing is held at a checkpoint, so a batching operator has no state.
 */
abstract class Batching<IN, OUT> extends AbstractStreamOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, ProcessingTimeCallback {
    private static final long serialVersionUID = 1L;

    protected final int maxRecords;
    private final long maxDelayMillis;

    private transient int held;
    private transient boolean timerArmed;

    Batching(int maxRecords, long maxDelayMillis) {
        this.maxRecords = maxRecords;
        this.maxDelayMillis = maxDelayMillis;
    }

    /** Count one more record held; sends the batches on when they are full. */
    protected final void held() {
        held++;
        if (held >= maxRecords) {
            flush();
        } else if (!timerArmed) {
            timerArmed = true;
            long now = getProcessingTimeService().getCurrentProcessingTime();
            getProcessingTimeService().registerTimer(now + maxDelayMillis, this);
        }
    }

    /** Send on every record held, as batches. */
    protected final void flush() {
        if (held > 0) {
            emitBatches();
            held = 0;
        }
    }

    /** Emit what is held, as batches, and forget it. */
    protected abstract void emitBatches();

    @Override
    public void onProcessingTime(long time) {
        timerArmed = false;
        flush();
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        flush();
    }

    /** Called before a watermark or a watermark status is sent on, before the batches are. */
    protected void beforeWatermark() {}

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        beforeWatermark();
        flush();
        super.processWatermark(mark);
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus watermarkStatus) throws Exception {
        beforeWatermark();
        flush();
        super.processWatermarkStatus(watermarkStatus);
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }
}
