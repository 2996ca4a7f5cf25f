package ais.flink;

import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.types.Row;
import org.apache.flink.util.OutputTag;

/**
 * Event-time watermarks for the parsed records, and the watermark each record was read under.
 *
 * <p>Input: batches of parsed lines from the Python parse operator, as columns (one array per
 * field, one value per line): {@code assigned}, the event time the parse operator decided for the
 * line (Long.MIN_VALUE never moves the watermark); {@code mmsi} and the report's fields; then
 * {@code group} and the fragment's fields. A line is a report or a multipart fragment (its
 * {@code group} is null for a report, the report fields are null for a fragment). Every record
 * is stamped, in its {@code watermark} field, with the watermark in force before it (the bounded
 * out-of-orderness watermark of the records before it), then leaves as {@code Row(mmsi, report)}
 * on the main output or {@code Row(group, fragment)} on the fragments side output; then the
 * watermark moves if its time is the newest. So the same input in the same order always gives
 * the same late decisions and the same watermarks, at any speed, whatever the batches.
 *
 * <p>The watermark that goes downstream moves in steps of {@code watermarkStep} ms: it is the
 * largest {@code k * step - 1} not above the exact one. Every event-time timer of the job falls
 * on such a value (window ends, the allowed lateness and vessel clean-ups are multiples of the
 * step), so each fires after the same record as with the exact watermark, while watermarks,
 * and the flushes of the batches in front of the keyed operators that each one causes, are
 * rare: once per step of event time instead of once per record.
 *
 * <p>Checkpointed: the newest event time is kept in union list state, and after a restore every
 * subtask emits the restored watermark (the highest of all subtasks) before anything else,
 * including a subtask that has nothing to read; a generator of a {@code WatermarkStrategy} would
 * start again from nothing, and late reports would be judged against a watermark far behind the
 * one the job had (the fault-injection tests caught that).
 *
 * <p>Idle: a subtask without records for {@code idleTimeout} ms marks itself idle, so it does not
 * hold back the watermark downstream; its next record makes it active again. The final watermark
 * of a bounded input is passed on.
 */
public final class StampedWatermarks extends AbstractStreamOperator<Row>
        implements OneInputStreamOperator<Row, Row>, ProcessingTimeCallback {
    private static final long serialVersionUID = 1L;

    private final long outOfOrderness;
    private final long idleTimeout;
    private final long watermarkStep;
    private final int reportArity;
    private final int fragmentArity;
    private final int reportWatermarkField;
    private final int fragmentWatermarkField;
    private final OutputTag<Row> fragments;

    private transient ListState<Long> maxTimestampState;
    private transient long maxTimestamp;
    private transient long emitted;
    private transient long emittedStep;
    private transient long lastRecordAt;
    private transient boolean idle;

    public StampedWatermarks(
            long outOfOrdernessMillis,
            long idleTimeoutMillis,
            long watermarkStepMillis,
            int reportArity,
            int fragmentArity,
            int reportWatermarkField,
            int fragmentWatermarkField,
            OutputTag<Row> fragments) {
        this.outOfOrderness = outOfOrdernessMillis;
        this.idleTimeout = idleTimeoutMillis;
        this.watermarkStep = watermarkStepMillis;
        this.reportArity = reportArity;
        this.fragmentArity = fragmentArity;
        this.reportWatermarkField = reportWatermarkField;
        this.fragmentWatermarkField = fragmentWatermarkField;
        this.fragments = fragments;
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
        emittedStep = Long.MIN_VALUE;
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
    public void processElement(StreamRecord<Row> element) throws Exception {
        lastRecordAt = getProcessingTimeService().getCurrentProcessingTime();
        if (idle) {
            idle = false;
            output.emitWatermarkStatus(WatermarkStatus.ACTIVE);
        }
        emitRestored();
        Row batch = element.getValue();
        Object[][] columns = new Object[batch.getArity()][];
        for (int c = 0; c < columns.length; c++) {
            columns[c] = (Object[]) batch.getField(c);
        }
        Object[] assigned = columns[0];
        Object[] mmsi = columns[1];
        int groupColumn = 2 + reportArity;
        Object[] group = columns[groupColumn];
        for (int i = 0; i < assigned.length; i++) {
            if (group[i] == null) {
                Row report = new Row(reportArity);
                for (int f = 0; f < reportArity; f++) {
                    report.setField(f, columns[2 + f][i]);
                }
                report.setField(reportWatermarkField, emitted);
                output.collect(new StreamRecord<>(Row.of(mmsi[i], report)));
            } else {
                Row fragment = new Row(fragmentArity);
                for (int f = 0; f < fragmentArity; f++) {
                    fragment.setField(f, columns[groupColumn + 1 + f][i]);
                }
                fragment.setField(fragmentWatermarkField, emitted);
                output.collect(fragments, new StreamRecord<>(Row.of(group[i], fragment)));
            }
            Long ts = (Long) assigned[i];
            if (ts != null && ts > maxTimestamp) {
                maxTimestamp = ts;
            }
            emitCurrent();
        }
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
            long stepped = Math.floorDiv(watermark + 1, watermarkStep) * watermarkStep - 1;
            if (stepped > emittedStep) {
                emittedStep = stepped;
                output.emitWatermark(new Watermark(stepped));
            }
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        // Upstream emits no watermarks but the final one of a bounded input: pass that on.
        if (mark.getTimestamp() == Long.MAX_VALUE && emitted != Long.MAX_VALUE) {
            emitted = Long.MAX_VALUE;
            emittedStep = Long.MAX_VALUE;
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
