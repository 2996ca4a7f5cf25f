package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link ShardKeySwitch}: what is written between {@code to(key)} and {@code back()} is the shard
 * key's state, and the backend's key is the call's again afterwards, on either backend.
 */
class ShardKeySwitchTest {
    static final class Nothing extends KeyedProcessFunction<Row, Row, Row> {
        private static final long serialVersionUID = 1L;

        @Override
        public void processElement(Row value, Context ctx, Collector<Row> out) {}
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void stateBetweenToAndBackIsTheShardKeysAndTheCallsKeyComesBack(boolean rocksDb) throws Exception {
        try (KeyedOneInputStreamOperatorTestHarness<Row, Row, Row> h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new Nothing()), row -> Row.of(row.getField(0)), Types.ROW(Types.INT))) {
            if (rocksDb) {
                h.setStateBackend(new EmbeddedRocksDBStateBackend());
            }
            h.open();
            KeyedStateBackend<Row> backend = h.getOperator().getKeyedStateBackend();
            ValueState<String> state = backend.getPartitionedState(
                    VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, new ValueStateDescriptor<>("v", Types.STRING));
            backend.setCurrentKey(Row.of(5)); // the key of the call (a batch's lead shard)
            state.update("the call's");
            ShardKeySwitch keys = new ShardKeySwitch();
            keys.bind(backend);
            keys.to(7);
            assertNull(state.value());
            state.update("seven");
            keys.to(9);
            state.update("nine");
            keys.back();
            assertEquals(Row.of(5), backend.getCurrentKey());
            assertEquals("the call's", state.value());
            keys.back(); // a second back changes nothing
            assertEquals(Row.of(5), backend.getCurrentKey());
            backend.setCurrentKey(Row.of(7));
            assertEquals("seven", state.value());
            backend.setCurrentKey(Row.of(9));
            assertEquals("nine", state.value());
        }
    }
}
