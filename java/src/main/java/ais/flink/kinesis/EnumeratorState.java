package ais.flink.kinesis;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The enumerator's checkpoint: every shard not finished (with its reader, or -1 when it waits for
 * one), the finished shards (with who read them), and whether the first discovery was made.
 */
final class EnumeratorState {
    final List<ShardSplit> splits;
    final List<Integer> owners;
    final Map<String, Integer> finished;
    final boolean discovered;

    EnumeratorState(List<ShardSplit> splits, List<Integer> owners, Map<String, Integer> finished, boolean discovered) {
        this.splits = splits;
        this.owners = owners;
        this.finished = finished;
        this.discovered = discovered;
    }

    static final class Serializer implements SimpleVersionedSerializer<EnumeratorState> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(EnumeratorState state) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeBoolean(state.discovered);
                out.writeInt(state.splits.size());
                for (int i = 0; i < state.splits.size(); i++) {
                    ShardSplit.write(state.splits.get(i), out);
                    out.writeInt(state.owners.get(i));
                }
                out.writeInt(state.finished.size());
                for (Map.Entry<String, Integer> e : state.finished.entrySet()) {
                    out.writeUTF(e.getKey());
                    out.writeInt(e.getValue());
                }
            }
            return bytes.toByteArray();
        }

        @Override
        public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
            if (version != 1) {
                throw new IOException("Kinesis enumerator state of unknown version " + version);
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
                boolean discovered = in.readBoolean();
                int n = in.readInt();
                List<ShardSplit> splits = new ArrayList<>(n);
                List<Integer> owners = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    splits.add(ShardSplit.read(in));
                    owners.add(in.readInt());
                }
                int f = in.readInt();
                Map<String, Integer> finished = new LinkedHashMap<>();
                for (int i = 0; i < f; i++) {
                    finished.put(in.readUTF(), in.readInt());
                }
                return new EnumeratorState(splits, owners, finished, discovered);
            }
        }
    }
}
