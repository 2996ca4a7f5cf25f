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
 * Records of a keyed stream, {@code Row(key, record)}, as batches per shard of the key,
 * {@code Row(shardKey, columns)}, so that the keyed Python operator downstream (keyed by shard)
 * is called once per batch instead of once per record. The shard is {@code floorMod(key,
 * shards)}; {@code shards} is the job's maximum parallelism, and a shard's key ({@link
 * #shardKey}) is the smallest non-negative integer that Flink assigns to the key group of the
 * shard's number. So every key group holds exactly one shard, and every parallelism up to the
 * maximum spreads the shards over its subtasks as evenly as Flink spreads key groups.
 *
 * <p>A batch is columnar: {@code columns} is a row with the record type's field names whose
 * fields are arrays, one value per record. (An array of rows would be simpler, but PyFlink's
 * thread mode converts the rows of an array with one reused buffer, and Python then sees the last
 * row as many times as there are rows.)
 *
 * <p>Every batch leaves before any watermark or watermark status (so the keyed operator sees
 * records and watermarks in the same order as without batching: its timers fire exactly when
 * they would have), before every checkpoint barrier, when {@code maxRecords} are held, after
 * {@code maxDelayMillis} of wall clock, and at the end of the input ({@link Batching}). Within a
 * shard the order of records is kept.
 *
 * <p>With {@code markers}, every checkpoint barrier is preceded, after the batches, by one
 * {@code Row(shardKey, columns)} with no records (an empty batch) for every shard: the keyed operator writes what it holds in Python
 * for that shard to Flink's keyed state when it gets one. A marker reaches the shard's subtask
 * before the barrier does on every channel, so with aligned checkpoints the state a checkpoint
 * takes is complete. Nothing is held in this operator at a checkpoint, so it has no state.
 */
public final class KeyedBatches extends Batching<Row, Row> {
    private static final long serialVersionUID = 1L;

    private final int shards;
    private final boolean markers;
    private final RowTypeInfo recordType;

    private transient List<List<Row>> pending;
    private transient int[] keys;

    public KeyedBatches(
            int shards, int maxRecords, long maxDelayMillis, boolean markers, RowTypeInfo recordType) {
        super(maxRecords, maxDelayMillis);
        this.shards = shards;
        this.markers = markers;
        this.recordType = recordType;
    }

    @Override
    public void open() throws Exception {
        super.open();
        pending = new ArrayList<>(shards);
        for (int i = 0; i < shards; i++) {
            pending.add(new ArrayList<>());
        }
        keys = shardKeys(shards);
    }

    /** Each shard's key: the smallest non-negative integer in the key group of its number. */
    static int[] shardKeys(int shards) {
        int[] keys = new int[shards];
        Arrays.fill(keys, -1);
        int found = 0;
        for (int key = 0; found < shards; key++) {
            int group = KeyGroupRangeAssignment.assignToKeyGroup(key, shards);
            if (keys[group] < 0) {
                keys[group] = key;
                found++;
            }
        }
        return keys;
    }

    @Override
    public void processElement(StreamRecord<Row> element) {
        Row row = element.getValue();
        int shard = (int) Math.floorMod(((Number) row.getField(0)).longValue(), (long) shards);
        pending.get(shard).add((Row) row.getField(1));
        held();
    }

    @Override
    protected void emitBatches() {
        for (int shard = 0; shard < shards; shard++) {
            List<Row> batch = pending.get(shard);
            if (!batch.isEmpty()) {
                output.collect(new StreamRecord<>(Row.of(keys[shard], columns(batch))));
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
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId); // sends the batches on
        if (markers) {
            for (int shard = 0; shard < shards; shard++) {
                output.collect(new StreamRecord<>(Row.of(keys[shard], columns(new ArrayList<>()))));
            }
        }
    }
}
