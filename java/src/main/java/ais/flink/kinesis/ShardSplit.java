package ais.flink.kinesis;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * One shard of the stream, and where to read it from: the split of the Kinesis source. Its
 * position is a sequence number (read after it), kept in checkpoints, or, before anything of the
 * shard was read, the starting position of the run (the oldest record, or a time). {@code stopAt}
 * is the bound of a bounded run: the shard ends at its first record that arrived after it (or
 * once the shard has been read up to its end after that time); {@code Long.MAX_VALUE} when
 * unbounded. A finished split is one read to its end, kept in a reader's checkpoint until the
 * enumerator has surely heard of it.
 */
public final class ShardSplit implements SourceSplit {
    /** How a split starts: at the oldest record, after a sequence number, or at a time. */
    public enum Start {
        TRIM_HORIZON,
        AFTER_SEQUENCE_NUMBER,
        AT_TIMESTAMP
    }

    final String stream;
    final String shardId;
    final List<String> parents;
    final Start start;
    /** The sequence number (AFTER_SEQUENCE_NUMBER) or epoch ms (AT_TIMESTAMP); empty otherwise. */
    final String startValue;
    final long stopAt;
    final boolean finished;

    ShardSplit(String stream, String shardId, List<String> parents, Start start, String startValue, long stopAt,
            boolean finished) {
        this.stream = stream;
        this.shardId = shardId;
        this.parents = Collections.unmodifiableList(new ArrayList<>(parents));
        this.start = start;
        this.startValue = startValue == null ? "" : startValue;
        this.stopAt = stopAt;
        this.finished = finished;
    }

    @Override
    public String splitId() {
        return shardId;
    }

    ShardSplit after(String sequenceNumber) {
        return new ShardSplit(stream, shardId, parents, Start.AFTER_SEQUENCE_NUMBER, sequenceNumber, stopAt, false);
    }

    ShardSplit asFinished() {
        return new ShardSplit(stream, shardId, parents, start, startValue, stopAt, true);
    }

    boolean bounded() {
        return stopAt != Long.MAX_VALUE;
    }

    @Override
    public String toString() {
        return shardId + " (" + start + (startValue.isEmpty() ? "" : " " + startValue) + (finished ? ", finished" : "")
                + ")";
    }

    static void write(ShardSplit split, DataOutputStream out) throws IOException {
        out.writeUTF(split.stream);
        out.writeUTF(split.shardId);
        out.writeInt(split.parents.size());
        for (String parent : split.parents) {
            out.writeUTF(parent);
        }
        out.writeByte(split.start.ordinal());
        out.writeUTF(split.startValue);
        out.writeLong(split.stopAt);
        out.writeBoolean(split.finished);
    }

    static ShardSplit read(DataInputStream in) throws IOException {
        String stream = in.readUTF();
        String shardId = in.readUTF();
        int n = in.readInt();
        List<String> parents = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            parents.add(in.readUTF());
        }
        Start start = Start.values()[in.readByte()];
        String value = in.readUTF();
        long stopAt = in.readLong();
        boolean finished = in.readBoolean();
        return new ShardSplit(stream, shardId, parents, start, value, stopAt, finished);
    }

    /** Splits in checkpoints. */
    static final class Serializer implements SimpleVersionedSerializer<ShardSplit> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(ShardSplit split) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                write(split, out);
            }
            return bytes.toByteArray();
        }

        @Override
        public ShardSplit deserialize(int version, byte[] serialized) throws IOException {
            if (version != 1) {
                throw new IOException("Kinesis shard split of unknown version " + version);
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
                return read(in);
            }
        }
    }
}
