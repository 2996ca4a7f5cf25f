package ais.flink;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.operators.ProcessingTimeService.ProcessingTimeCallback;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
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
 * Event-time watermarks that follow the receivers ({@link ReceiverClocks}), and the watermark
 * each report was read under.
 *
 * <p>Input: the parse operator's batches of parsed lines as columns (one array per field, one
 * value per line): {@code assigned} (the event time the line moves the watermark with,
 * Long.MIN_VALUE for none), {@code source} (its receiver, "" without one), and the line's report,
 * if it has one, as {@code mmsi} and {@code packed} (the other fields in one string, which this
 * operator does not read; both null for a line that only moves the watermark, such as a
 * multipart fragment). Every report leaves as {@code Row(mmsi, WireReport(mmsi, watermark,
 * packed))}, stamped with the watermark in force before its line; then the line's time is
 * observed. So
 * the same input in the same order gives the same stamps, the same late decisions and the same
 * watermarks at any speed, whatever the batches.
 *
 * <p>The watermark that goes downstream moves in steps of {@code watermarkStep} ms (the largest
 * {@code k * step - 1} not above the exact one): every event-time timer of the job falls on such
 * a value, so each fires after the same record as with the exact watermark, while watermarks,
 * and the batch flushes each causes downstream, come once per step of event time.
 *
 * <p>Lines more than the maximum clock skew ahead of or behind the consensus are counted per
 * receiver: metric counters {@code clock_ahead} and {@code clock_behind} in the group
 * {@code receiver.<id>} (the first {@value #MAX_RECEIVER_METRICS} receivers; the rest in
 * {@code receiver.other}) and, for a run that writes a summary, tally records on the side output.
 *
 * <p>Checkpointed: the lane's clocks in union list state; a restore at the same parallelism takes
 * its own lane back, one at another parallelism merges them (the highest watermark, every
 * receiver at its newest). After a restore each subtask emits the restored watermark before
 * anything else. Idle: a subtask without records for {@code idleTimeout} ms of wall clock marks
 * itself idle, so it does not hold back the watermark downstream. The final watermark of a
 * bounded input is passed on.
 *
 * <p>Live ({@code receivedLagMillis} 0 or more: the job's own network input): the lines stamped on
 * receipt ({@code received} true) move the lane's received clock, and every
 * {@value #TICK_MS} ms of wall clock with no batch for the lag, the clock moves to the wall clock
 * less the lag ({@link ReceiverClocks#tick}): the watermark follows the feed's newest line and,
 * through a silence, the clock. Such a lane never goes idle: its watermark moves on by itself. A live
 * lane whose lines all carry times of their own (a capture replayed over UDP) follows its receivers
 * alone, and goes idle as any other.
 */
public final class ReceiverWatermarks extends AbstractStreamOperator<Row>
        implements OneInputStreamOperator<Row, Row>, ProcessingTimeCallback {
    private static final long serialVersionUID = 1L;
    static final int MAX_RECEIVER_METRICS = 1000;
    static final long TICK_MS = 100;

    private final long outOfOrderness;
    private final long idleTimeout;
    private final long maxClockSkew;
    private final int warmUpLines;
    private final int consensusLines;
    private final int jumpLines;
    private final long watermarkStep;
    private final long receivedLag;
    private final OutputTag<String> tallies;
    private final int assignedColumn;
    private final int sourceColumn;
    private final int receivedColumn;
    private final int mmsiColumn;
    private final int packedColumn;
    private final int wireArity;
    private final int wireMmsi;
    private final int wireWatermark;
    private final int wirePacked;

    private transient ReceiverClocks clocks;
    private transient ListState<ReceiverClocks.LaneState> laneState;
    private transient volatile long emittedStep;
    private transient boolean restored;
    private transient long lastRecordAt;
    private transient boolean idle;
    private transient Map<String, Counter[]> receiverCounters;

    public ReceiverWatermarks(
            long outOfOrdernessMillis,
            long idleTimeoutMillis,
            long maxClockSkewMillis,
            int warmUpLines,
            int consensusLines,
            int jumpLines,
            long watermarkStepMillis,
            long receivedLagMillis,
            RowTypeInfo parsedType,
            RowTypeInfo wireReportType,
            OutputTag<String> tallies) {
        this.receivedLag = receivedLagMillis;
        this.outOfOrderness = outOfOrdernessMillis;
        this.idleTimeout = idleTimeoutMillis;
        this.maxClockSkew = maxClockSkewMillis;
        this.warmUpLines = warmUpLines;
        this.consensusLines = consensusLines;
        this.jumpLines = jumpLines;
        this.watermarkStep = watermarkStepMillis;
        this.tallies = tallies;
        this.assignedColumn = RecordLayout.arrayField(parsedType, "assigned", Types.LONG);
        this.sourceColumn = RecordLayout.arrayField(parsedType, "source", Types.STRING);
        this.receivedColumn = RecordLayout.arrayField(parsedType, "received", Types.BOOLEAN);
        this.mmsiColumn = RecordLayout.arrayField(parsedType, "mmsi", Types.LONG);
        this.packedColumn = RecordLayout.arrayField(parsedType, "packed", Types.STRING);
        this.wireArity = wireReportType.getArity();
        this.wireMmsi = RecordLayout.field(wireReportType, "mmsi", Types.LONG);
        this.wireWatermark = RecordLayout.field(wireReportType, "watermark", Types.LONG);
        this.wirePacked = RecordLayout.field(wireReportType, "packed", Types.STRING);
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        laneState =
                context.getOperatorStateStore()
                        .getUnionListState(
                                new ListStateDescriptor<>(
                                        "receiver-clocks", TypeInformation.of(ReceiverClocks.LaneState.class)));
        clocks = new ReceiverClocks(
                outOfOrderness, idleTimeout, maxClockSkew, consensusLines, warmUpLines, jumpLines, receivedLag);
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        List<ReceiverClocks.LaneState> states = new ArrayList<>();
        for (ReceiverClocks.LaneState s : laneState.get()) {
            states.add(s);
        }
        boolean sameLanes = !states.isEmpty();
        for (ReceiverClocks.LaneState s : states) {
            sameLanes &= s.parallelism == parallelism;
        }
        for (ReceiverClocks.LaneState s : states) {
            if (!sameLanes || s.subtask == subtask) {
                clocks.restore(s);
            }
        }
        restored = clocks.watermark != ReceiverClocks.TIME_UNKNOWN;
        emittedStep = Long.MIN_VALUE;
    }

    @Override
    public void open() throws Exception {
        super.open();
        receiverCounters = new HashMap<>();
        // How far the watermark sent on is behind the wall clock (-1 before the first, and at
        // the end of the input): a live run's latency floor.
        getMetricGroup().gauge("watermark_lag_ms", (Gauge<Long>) () -> {
            long step = emittedStep;
            return step == Long.MIN_VALUE || step == Long.MAX_VALUE ? -1L : System.currentTimeMillis() - step;
        });
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
        Object[] assigned = (Object[]) batch.getField(assignedColumn);
        Object[] source = (Object[]) batch.getField(sourceColumn);
        Object[] received = (Object[]) batch.getField(receivedColumn);
        Object[] mmsi = (Object[]) batch.getField(mmsiColumn);
        Object[] packed = (Object[]) batch.getField(packedColumn);
        for (int i = 0; i < assigned.length; i++) {
            if (mmsi[i] != null) {
                Row r = new Row(wireArity);
                r.setField(wireMmsi, mmsi[i]);
                r.setField(wireWatermark, clocks.watermark);
                r.setField(wirePacked, packed[i]);
                output.collect(new StreamRecord<>(Row.of(mmsi[i], r)));
            }
            Long ts = (Long) assigned[i];
            if (ts != null && ts != ReceiverClocks.TIME_UNKNOWN) {
                String receiver = source[i] == null ? "" : (String) source[i];
                int flag = Boolean.TRUE.equals(received[i]) ? clocks.observeReceived(receiver, ts) : clocks.observe(receiver, ts);
                if (flag != ReceiverClocks.NONE) {
                    count(receiver, flag);
                }
                emitCurrent();
            }
        }
    }

    private void count(String receiver, int flag) {
        String name = flag == ReceiverClocks.AHEAD ? "clock_ahead" : "clock_behind";
        if (tallies != null) {
            output.collect(tallies, new StreamRecord<>("by_receiver#" + name + "#" + receiver));
        }
        Counter[] counters = receiverCounters.get(receiver);
        if (counters == null) {
            String group = receiverCounters.size() < MAX_RECEIVER_METRICS ? (receiver.isEmpty() ? "none" : receiver) : "other";
            MetricGroup g = getMetricGroup().addGroup("receiver", group);
            counters = new Counter[] {g.counter("clock_ahead"), g.counter("clock_behind")};
            if (receiverCounters.size() < MAX_RECEIVER_METRICS) {
                receiverCounters.put(receiver, counters);
            }
        }
        counters[flag == ReceiverClocks.AHEAD ? 0 : 1].inc();
    }

    @Override
    public void onProcessingTime(long time) throws Exception {
        emitRestored();
        long now = getProcessingTimeService().getCurrentProcessingTime();
        if (emittedStep == Long.MAX_VALUE) {
            return; // the input has ended
        }
        if (clocks.followsClock()) {
            if (now - lastRecordAt >= receivedLag) {
                clocks.tick(now);
                emitCurrent();
            }
            getProcessingTimeService().registerTimer(now + TICK_MS, this);
            return;
        }
        if (!idle && now - lastRecordAt >= idleTimeout) {
            idle = true;
            output.emitWatermarkStatus(WatermarkStatus.IDLE);
        }
        // A live lane looks again every tick: its first line stamped on receipt may come any time.
        long next = clocks.live() ? now + TICK_MS : idle ? now + idleTimeout : lastRecordAt + idleTimeout;
        getProcessingTimeService().registerTimer(Math.max(next, now + 1), this);
    }

    private void emitRestored() {
        if (restored) {
            restored = false;
            emitCurrent();
        }
    }

    private void emitCurrent() {
        long watermark = clocks.watermark;
        if (watermark == ReceiverClocks.TIME_UNKNOWN || emittedStep == Long.MAX_VALUE) {
            return;
        }
        long stepped = Math.floorDiv(watermark + 1, watermarkStep) * watermarkStep - 1;
        if (stepped > emittedStep) {
            emittedStep = stepped;
            output.emitWatermark(new Watermark(stepped));
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        // Upstream emits no watermarks but the final one of a bounded input or of a drain: pass
        // that on, active again if the lane had gone idle (downstream ignores the watermarks of
        // an idle input, and a live feed that went quiet before a Ctrl-C has).
        if (mark.getTimestamp() == Long.MAX_VALUE && emittedStep != Long.MAX_VALUE) {
            emittedStep = Long.MAX_VALUE;
            if (idle) {
                idle = false;
                output.emitWatermarkStatus(WatermarkStatus.ACTIVE);
            }
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
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        laneState.update(Collections.singletonList(clocks.snapshot(subtask, parallelism)));
    }
}
