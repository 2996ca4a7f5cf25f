package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * {@link KeyedBatches}: vessel shards one per key group, batches per dedup subtask under the key
 * of its first shard, and a marker per shard before anything else.
 */
class KeyedBatchesTest {
    static final int MAX_PARALLELISM = 128;
    static final RowTypeInfo RECORD =
            new RowTypeInfo(new TypeInformation<?>[] {Types.LONG, Types.STRING}, new String[] {"mmsi", "text"});

    @Test
    void everyShardHasAKeyGroupOfItsOwnAndTheKeysAreTheGoldenOnes() throws Exception {
        int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
        for (int shard = 0; shard < MAX_PARALLELISM; shard++) {
            assertEquals(shard, KeyGroupRangeAssignment.assignToKeyGroup(Row.of(keys[shard]), MAX_PARALLELISM));
        }
        JsonNode golden = Golden.load("shard_keys.json");
        assertEquals(MAX_PARALLELISM, golden.get("shards").asInt());
        for (int shard = 0; shard < MAX_PARALLELISM; shard++) {
            assertEquals(golden.get("keys").get(shard).asInt(), keys[shard], "shard " + shard);
        }
    }

    @Test
    void everyParallelismUpToTheMaximumGivesEverySubtaskShards() {
        int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
        for (int parallelism : new int[] {1, 2, 3, 16, 17, 32, 100, 128}) {
            int[] shardsOf = new int[parallelism];
            for (int key : keys) {
                shardsOf[KeyGroupRangeAssignment.assignKeyToParallelOperator(Row.of(key), MAX_PARALLELISM, parallelism)]++;
            }
            int least = MAX_PARALLELISM / parallelism;
            for (int subtask = 0; subtask < parallelism; subtask++) {
                int n = shardsOf[subtask];
                assertTrue(n == least || n == least + 1, "parallelism " + parallelism + ", subtask " + subtask + ": " + n);
            }
        }
    }

    static List<Row> rows(OneInputStreamOperatorTestHarness<Row, Row> harness) {
        List<Row> out = new ArrayList<>();
        for (Object o : harness.getOutput()) {
            out.add(o instanceof StreamRecord ? (Row) ((StreamRecord<?>) o).getValue() : null);
        }
        return out;
    }

    static List<String> texts(Row batch) {
        return List.of((String[]) ((Row) batch.getField(1)).getField(1));
    }

    @Test
    void aSubtasksReportsLeaveInOneBatchUnderItsFirstShardsKeyInTheirOrderAfterAMarkerPerShard()
            throws Exception {
        int parallelism = 2; // shards 0-63 on subtask 0, 64-127 on subtask 1
        KeyedBatches batches = new KeyedBatches(MAX_PARALLELISM, parallelism, 1000, 60_000, true, RECORD);
        int[] keys = KeyedBatches.shardKeys(MAX_PARALLELISM);
        try (OneInputStreamOperatorTestHarness<Row, Row> harness = new OneInputStreamOperatorTestHarness<>(batches)) {
            harness.open();
            // shards 32, 65, 32, 1, 127
            long[] mmsis = {244_660_000L, 367_000_001L, 244_660_128L, 1L, 127L};
            for (int i = 0; i < mmsis.length; i++) {
                harness.processElement(new StreamRecord<>(Row.of(mmsis[i], Row.of(mmsis[i], "r" + i))));
            }
            harness.processWatermark(new Watermark(5));
            List<Row> out = rows(harness);
            assertEquals(MAX_PARALLELISM + 2 + 1, out.size());
            for (int shard = 0; shard < MAX_PARALLELISM; shard++) {
                assertEquals(keys[shard], out.get(shard).getField(0));
                assertEquals(List.of(), texts(out.get(shard)));
            }
            Row first = out.get(MAX_PARALLELISM);
            Row second = out.get(MAX_PARALLELISM + 1);
            assertEquals(keys[0], first.getField(0));
            assertEquals(List.of("r0", "r2", "r3"), texts(first));
            assertEquals(keys[64], second.getField(0));
            assertEquals(List.of("r1", "r4"), texts(second));
            assertEquals(null, out.get(MAX_PARALLELISM + 2)); // the watermark, after the batches

            // Before a checkpoint barrier: the batches, then a marker per shard again.
            harness.processElement(new StreamRecord<>(Row.of(1L, Row.of(1L, "r5"))));
            harness.prepareSnapshotPreBarrier(1);
            List<Row> after = rows(harness).subList(out.size(), harness.getOutput().size());
            assertEquals(1 + MAX_PARALLELISM, after.size());
            assertEquals(List.of("r5"), texts(after.get(0)));
            assertEquals(keys[127], after.get(MAX_PARALLELISM).getField(0));
        }
    }
}
