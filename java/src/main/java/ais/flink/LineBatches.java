package ais.flink;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.Row;

/**
 * Consecutive lines of one lane as one record, {@code Row(lane, String[])}, so that the Python
 * parse operator is called once per batch instead of once per line: every call into Python and
 * every record converted between Java and Python costs several microseconds, more than parsing a
 * line.
 *
 * <p>A lane is this subtask's stream of lines (one source subtask's). {@code lane} is a key that
 * Flink's key groups assign to this very subtask index, so the parse operator downstream, at the
 * same parallelism, can take the stream as keyed by lane without a shuffle (the job reinterprets
 * it as keyed) and keep each lane's pending multipart groups in its keyed state.
 *
 * <p>A batch leaves when it holds {@code maxLines} lines, after {@code maxDelayMillis} of wall
 * clock, and before every checkpoint barrier or watermark status from upstream, and at the end of
 * the input ({@link Batching}). The order of lines is kept. The source's watermarks, which only
 * pace parallel file lanes, end here.
 */
public final class LineBatches extends Batching<String, Row> {
    private static final long serialVersionUID = 1L;
    private static final String[] EMPTY = new String[0];

    private transient List<String> lines;
    private transient int lane;
    private transient Counter inputBytes;

    public LineBatches(int maxLines, long maxDelayMillis) {
        super(maxLines, maxDelayMillis);
    }

    @Override
    public void open() throws Exception {
        super.open();
        lines = new ArrayList<>(maxRecords);
        // The size of the lines read, each with its line break (one byte a character: the progress
        // line's share of a plain input's size).
        inputBytes = getMetricGroup().counter("input_bytes");
        lane =
                laneKey(
                        getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                        getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks(),
                        getRuntimeContext().getTaskInfo().getMaxNumberOfParallelSubtasks());
    }

    /** The smallest key that Flink assigns to subtask {@code index}, as PyFlink keys a Row(key, ...). */
    static int laneKey(int index, int parallelism, int maxParallelism) {
        for (int key = 0; ; key++) {
            Row asKey = new Row(1);
            asKey.setField(0, key);
            if (KeyGroupRangeAssignment.assignKeyToParallelOperator(asKey, maxParallelism, parallelism) == index) {
                return key;
            }
        }
    }

    @Override
    public void processElement(StreamRecord<String> element) {
        String line = element.getValue();
        lines.add(line);
        inputBytes.inc(line.length() + 1);
        held();
    }

    /**
     * The source's watermarks pace parallel file lanes ({@link LaneClock}) and stop here: the job's
     * own come from the parsed lines ({@link ReceiverWatermarks}). The final one of a bounded input
     * is passed on.
     */
    @Override
    public void processWatermark(Watermark mark) throws Exception {
        if (mark.getTimestamp() == Long.MAX_VALUE) {
            super.processWatermark(mark);
        }
    }

    @Override
    protected void emitBatches() {
        output.collect(new StreamRecord<>(Row.of(lane, lines.toArray(EMPTY))));
        lines.clear();
    }
}
