package ais.flink;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * Bounded out-of-orderness watermarks from the records' timestamps, emitted on the record that
 * moves them, with an idle timeout, and kept in checkpoints.
 *
 * <p>Per record: the same input in the same order always yields the same watermarks, so late
 * decisions and window revisions are reproducible (Flink's built-in generator emits every 200 ms
 * of wall clock). Timestamps of Long.MIN_VALUE ("no event time") never move the watermark.
 *
 * <p>Checkpointed: a watermark generator of a {@code WatermarkStrategy} starts again from nothing
 * after a restore, so a job restored from a checkpoint or a savepoint judged its first reports
 * against a watermark far behind the one it had, and its window operator (whose timers had
 * already fired) no longer knew which windows had fired: late reports stopped re-firing them
 * (the fault-injection tests caught it). This operator keeps its newest timestamp in union list
 * state, and after a restore every subtask emits the restored watermark (the highest of all
 * subtasks) before anything else, including a subtask that has nothing to read.
 *
 * <p>Idle: a subtask without records for {@code idleTimeout} ms marks itself idle, so it does not
 * hold back the watermark downstream; its next record makes it active again. The final watermark
 * of a bounded input is passed on.
 */
public final class CheckpointedWatermarks<T> extends AbstractStreamOperator<T>
        implements OneInputStreamOperator<T, T>, ProcessingTimeCallback {
    private static final long serialVersionUID = 1L;

    private final long outOfOrderness;
    private final long idleTimeout;

    private transient ListState<Long> maxTimestampState;
    private transient long maxTimestamp;
    private transient long emitted;
    private transient long lastRecordAt;
    private transient boolean idle;

    public CheckpointedWatermarks(long outOfOrdernessMillis, long idleTimeoutMillis) {
        this.outOfOrderness = outOfOrdernessMillis;
        this.idleTimeout = idleTimeoutMillis;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        maxTimestampState =
                context.getOperatorStateStore()
                        .getUnionListState(new ListStateDescriptor<>("max-event-time", Types.LONG));
        maxTimestamp = Long.MIN_VALUE;
        for (Long restored : maxTimestampState.get()) {
            maxTimestamp = Math.max(maxTimestamp, restored);
        }
        emitted = Long.MIN_VALUE;
    }

    @Override
    public void open() throws Exception {
        super.open();
        lastRecordAt = getProcessingTimeService().getCurrentProcessingTime();
        // Fires at once: a restored watermark goes out before the first record, even from a
        // subtask that never gets one; then the idleness check runs.
        getProcessingTimeService().registerTimer(lastRecordAt, this);
    }

    @Override
    public void processElement(StreamRecord<T> element) throws Exception {
        lastRecordAt = getProcessingTimeService().getCurrentProcessingTime();
        if (idle) {
            idle = false;
            output.emitWatermarkStatus(WatermarkStatus.ACTIVE);
        }
        emitRestored();
        output.collect(element);
        long ts = element.hasTimestamp() ? element.getTimestamp() : Long.MIN_VALUE;
        if (ts != Long.MIN_VALUE && ts > maxTimestamp) {
            maxTimestamp = ts;
        }
        emitCurrent();
    }

    @Override
    public void onProcessingTime(long time) throws Exception {
        emitRestored();
        long now = getProcessingTimeService().getCurrentProcessingTime();
        if (!idle && now - lastRecordAt >= idleTimeout) {
            idle = true;
            output.emitWatermarkStatus(WatermarkStatus.IDLE);
        }
        if (emitted == Long.MAX_VALUE) {
            return; // the input has ended
        }
        long next = idle ? now + idleTimeout : lastRecordAt + idleTimeout;
        getProcessingTimeService().registerTimer(Math.max(next, now + 1), this);
    }

    private void emitRestored() {
        if (emitted == Long.MIN_VALUE && maxTimestamp != Long.MIN_VALUE) {
            emitCurrent();
        }
    }

    private void emitCurrent() {
        if (maxTimestamp == Long.MIN_VALUE) {
            return;
        }
        long watermark = maxTimestamp - outOfOrderness - 1;
        if (watermark > emitted) {
            emitted = watermark;
            output.emitWatermark(new Watermark(watermark));
        }
    }

    @Override
    public void processWatermark(org.apache.flink.streaming.api.watermark.Watermark mark) throws Exception {
        // Upstream emits no watermarks but the final one of a bounded input: pass that on.
        if (mark.getTimestamp() == Long.MAX_VALUE && emitted != Long.MAX_VALUE) {
            emitted = Long.MAX_VALUE;
            output.emitWatermark(mark);
        }
    }

    @Override
    public void processWatermarkStatus(WatermarkStatus watermarkStatus) {
        // This operator decides its own idleness.
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        maxTimestampState.update(java.util.Collections.singletonList(maxTimestamp));
    }
}
