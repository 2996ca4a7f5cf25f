package ais.flink;

import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.types.Row;

/**
 * Lets the dedup operator's Python read and write one vessel shard's keyed state while it handles
 * a batch that came under another shard's key ({@link KeyedBatches}: one batch per subtask, under
 * the key of its first shard). {@link #to} makes a shard's key, {@code Row(key)}, the keyed state
 * backend's current key; {@link #back} gives the backend the key it had before. Every state access
 * between the two is the shard's; nothing else (a timer, an output) may come between them, and
 * the Python side calls {@code back} before it returns.
 *
 * <p>Built without arguments (the Python side loads it with the task's class loader) and bound to
 * the backend PyFlink's embedded operator hands its Python function.
 */
public final class ShardKeySwitch {
    private KeyedStateBackend<Row> backend;
    private Row saved;

    public void bind(KeyedStateBackend<Row> backend) {
        this.backend = backend;
    }

    /** The shard key {@code key} (a key of {@link KeyedBatches#shardKeys}) as the current key. */
    public void to(int key) {
        if (saved == null) {
            saved = backend.getCurrentKey();
        }
        backend.setCurrentKey(Row.of(key));
    }

    /** The current key as it was before the first {@link #to}. */
    public void back() {
        if (saved != null) {
            backend.setCurrentKey(saved);
            saved = null;
        }
    }
}
