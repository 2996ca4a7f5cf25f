package ais.flink;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.types.Row;

/**
 * Records of a keyed stream, {@code Row(key, record)}, as batches for the subtasks of a keyed
 * Python operator downstream, {@code Row(shardKey, columns)}, so that it is called once per batch
 * instead of once per record.
 *
 * <p>Every record belongs to a shard, {@code floorMod(key, shards)}; {@code shards} is the job's
 * maximum parallelism, and a shard's key ({@link #shardKeys}) is the smallest non-negative integer
 * that Flink assigns to the key group of the shard's number (as the keyed stream's key, {@code
 * Row(key)}). So every key group holds exactly one
 * shard, and any parallelism up to the maximum spreads the shards over the subtasks as evenly as
 * Flink spreads key groups. A batch holds the records of every shard of one subtask (the
 * operator's {@code parallelism}), under the key of the subtask's first shard: the Python
 * operator keeps each shard's state in keyed state under the shard's own key, and takes the
 * records of all its shards in one call. Within a shard the order of records is kept.
 *
 * <p>An empty batch (no records) under a shard's own key is a marker for that shard: the keyed
 * operator loads the shard's state from keyed state when it gets the first one, and writes what
 * it changed of the shard back when it gets another. This operator sends one for every shard
 * before anything else it sends (so a subtask has loaded each of its shards before a batch of
 * them arrives, or a watermark fires their timers), and, with {@code markers}, one for every
 * shard after the batches before every checkpoint barrier: a marker reaches the shard's subtask
 * before the barrier does on every channel, so with aligned checkpoints the state a checkpoint
 * takes is complete.
 *
 * <p>Every batch leaves before any watermark or watermark status (so the keyed operator sees
 * records and watermarks in the same order as without batching: its timers fire exactly when
 * they would have), before every checkpoint barrier, when {@code maxRecords} are held, after
 * {@code maxDelayMillis} of wall clock, and at the end of the input ({@link Batching}). Nothing
 * is held in this operator at a checkpoint, so it has no state.
 */
public final class KeyedBatches extends Batching<Row, Row> {
    private static final long serialVersionUID = 1L;

    private final int shards;
    private final int parallelism;
    private final boolean markers;
    private final RowTypeInfo recordType;

    private transient List<List<Row>> pending; // per subtask
    private transient int[] keys; // per shard
    private transient int[] subtaskOf; // per shard
    private transient int[] leadKey; // per subtask
    private transient boolean announced;

    public KeyedBatches(
            int shards,
            int parallelism,
            int maxRecords,
            long maxDelayMillis,
            boolean markers,
            RowTypeInfo recordType) {
        super(maxRecords, maxDelayMillis);
        if (parallelism < 1 || parallelism > shards) {
            throw new IllegalArgumentException(
                    "parallelism " + parallelism + " must be between 1 and the shards, " + shards);
        }
        this.shards = shards;
        this.parallelism = parallelism;
        this.markers = markers;
        this.recordType = recordType;
    }

    @Override
    public void open() throws Exception {
        super.open();
        keys = shardKeys(shards);
        subtaskOf = new int[shards];
        leadKey = new int[parallelism];
        Arrays.fill(leadKey, -1);
        for (int shard = 0; shard < shards; shard++) {
            int subtask = KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup(shards, parallelism, shard);
            subtaskOf[shard] = subtask;
            if (leadKey[subtask] < 0) {
                leadKey[subtask] = keys[shard];
            }
        }
        pending = new ArrayList<>(parallelism);
        for (int i = 0; i < parallelism; i++) {
            pending.add(new ArrayList<>());
        }
    }

    /**
     * Each shard's key: the smallest non-negative integer in the key group of its number. The
     * keyed stream downstream keys on {@code Row(key)} (PyFlink's key selector), so that is what
     * is hashed.
     */
    static int[] shardKeys(int shards) {
        int[] keys = new int[shards];
        Arrays.fill(keys, -1);
        int found = 0;
        for (int key = 0; found < shards; key++) {
            int group = KeyGroupRangeAssignment.assignToKeyGroup(Row.of(key), shards);
            if (keys[group] < 0) {
                keys[group] = key;
                found++;
            }
        }
        return keys;
    }

    /** A marker for every shard, once, before anything else leaves. */
    private void announce() {
        if (!announced) {
            announced = true;
            sendMarkers();
        }
    }

    private void sendMarkers() {
        for (int shard = 0; shard < shards; shard++) {
            output.collect(new StreamRecord<>(Row.of(keys[shard], columns(new ArrayList<>()))));
        }
    }

    @Override
    public void processElement(StreamRecord<Row> element) {
        announce();
        Row row = element.getValue();
        int shard = (int) Math.floorMod(((Number) row.getField(0)).longValue(), (long) shards);
        pending.get(subtaskOf[shard]).add((Row) row.getField(1));
        held();
    }

    @Override
    protected void emitBatches() {
        for (int subtask = 0; subtask < parallelism; subtask++) {
            List<Row> batch = pending.get(subtask);
            if (!batch.isEmpty()) {
                output.collect(new StreamRecord<>(Row.of(leadKey[subtask], columns(batch))));
                batch.clear();
            }
        }
    }

    private Row columns(List<Row> records) {
        int arity = recordType.getArity();
        Row columns = new Row(arity);
        for (int field = 0; field < arity; field++) {
            Object column = Array.newInstance(recordType.getTypeAt(field).getTypeClass(), records.size());
            for (int i = 0; i < records.size(); i++) {
                Array.set(column, i, records.get(i).getField(field));
            }
            columns.setField(field, column);
        }
        return columns;
    }

    @Override
    protected void beforeWatermark() {
        announce();
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId); // sends the batches on
        if (!announced) {
            announce();
        } else if (markers) {
            sendMarkers();
        }
    }
}
