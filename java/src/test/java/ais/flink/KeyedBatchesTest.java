package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/** {@link KeyedBatches}: batches per vessel shard, each under a key of the shard's own key group. */
class KeyedBatchesTest {
    static final int MAX_PARALLELISM = 128;
    static final RowTypeInfo RECORD =
            new RowTypeInfo(new TypeInformation<?>[] {Types.LONG, Types.STRING}, new String[] {"mmsi", "text"});

    @Test
    void everyShardHasAKeyGroupOfItsOwn() {
        int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
        for (int shard = 0; shard < MAX_PARALLELISM; shard++) {
            assertEquals(shard, KeyGroupRangeAssignment.assignToKeyGroup(keys[shard], MAX_PARALLELISM));
        }
    }

    @Test
    void everyParallelismUpToTheMaximumGivesEverySubtaskShards() {
        int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
        for (int parallelism : new int[] {1, 2, 3, 16, 17, 32, 100, 128}) {
            int[] shardsOf = new int[parallelism];
            for (int key : keys) {
                shardsOf[KeyGroupRangeAssignment.assignKeyToParallelOperator(key, MAX_PARALLELISM, parallelism)]++;
            }
            int least = MAX_PARALLELISM / parallelism;
            for (int subtask = 0; subtask < parallelism; subtask++) {
                int n = shardsOf[subtask];
                assertTrue(n == least || n == least + 1, "parallelism " + parallelism + ", subtask " + subtask + ": " + n);
            }
        }
    }

    @Test
    void reportsLeaveInBatchesPerShardInTheirOrderBeforeTheWatermark() throws Exception {
        KeyedBatches batches = new KeyedBatches(MAX_PARALLELISM, 1000, 60_000, false, RECORD);
        try (OneInputStreamOperatorTestHarness<Row, Row> harness = new OneInputStreamOperatorTestHarness<>(batches)) {
            harness.open();
            long[] mmsis = {244_660_000L, 367_000_065L, 244_660_128L, 244_660_000L, 1L};
            for (int i = 0; i < mmsis.length; i++) {
                harness.processElement(new StreamRecord<>(Row.of(mmsis[i], Row.of(mmsis[i], "r" + i))));
            }
            harness.processWatermark(new Watermark(5));
            int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
            Map<Integer, List<String>> got = new HashMap<>();
            List<Object> out = new ArrayList<>(harness.getOutput());
            for (Object o : out.subList(0, out.size() - 1)) {
                Row batch = (Row) ((StreamRecord<?>) o).getValue();
                Row columns = (Row) batch.getField(1);
                got.put((Integer) batch.getField(0), List.of((String[]) columns.getField(1)));
            }
            assertEquals(new Watermark(5), out.get(out.size() - 1));
            // 244660000 and 244660128 are shard 32 (mod 128); 367000065 and 1 are shard 1.
            assertEquals(2, got.size());
            assertEquals(List.of("r0", "r2", "r3"), got.get(keys[32]));
            assertEquals(List.of("r1", "r4"), got.get(keys[1]));
        }
    }
}
