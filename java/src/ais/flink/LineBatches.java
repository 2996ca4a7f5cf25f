package ais.flink;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * Consecutive lines as one record ({@code String[]}), so that the Python parse operator is called
 * once per batch instead of once per line: every call into Python and every record converted
 * between Java and Python costs several microseconds, more than parsing a line.
 *
 * <p>A batch leaves when it holds {@code maxLines} lines, when {@code maxDelayMillis} of wall
 * clock have passed since its first line (a quiet stream is not held back), before every
 * checkpoint barrier (nothing is in flight in this operator at a checkpoint, so it has no state),
 * before any watermark or watermark status from upstream, and at the end of a bounded input. The
 * order of lines is kept.
 */
public final class LineBatches extends AbstractStreamOperator<String[]>
        implements OneInputStreamOperator<String, String[]>, BoundedOneInput, ProcessingTimeCallback {
    private static final long serialVersionUID = 1L;
    private static final String[] EMPTY = new String[0];

    private final int maxLines;
    private final long maxDelayMillis;

    private transient List<String> lines;
    private transient boolean timerArmed;

    public LineBatches(int maxLines, long maxDelayMillis) {
        this.maxLines = maxLines;
        this.maxDelayMillis = maxDelayMillis;
    }

    @Override
    public void open() throws Exception {
        super.open();
        lines = new ArrayList<>(maxLines);
    }

    @Override
    public void processElement(StreamRecord<String> element) {
        lines.add(element.getValue());
        if (lines.size() >= maxLines) {
            flush();
        } else if (!timerArmed) {
            timerArmed = true;
            long now = getProcessingTimeService().getCurrentProcessingTime();
            getProcessingTimeService().registerTimer(now + maxDelayMillis, this);
        }
    }

    @Override
    public void onProcessingTime(long time) {
        timerArmed = false;
        flush();
    }

    private void flush() {
        if (!lines.isEmpty()) {
            output.collect(new StreamRecord<>(lines.toArray(EMPTY)));
            lines.clear();
        }
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        flush();
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        flush();
        super.processWatermark(mark);
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus watermarkStatus) throws Exception {
        flush();
        super.processWatermarkStatus(watermarkStatus);
    }

    @Override
    public void endInput() {
        flush();
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }
}
