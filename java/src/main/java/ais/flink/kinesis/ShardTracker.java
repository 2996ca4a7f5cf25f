package ais.flink.kinesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The enumerator's book of shards (plain logic, no Flink): every shard discovered and not yet
 * finished, which reader has it, and which are finished. A shard is ready for a reader once each
 * of its parents is finished (after a split, the parent is read to its end before either child;
 * after a merge, both parents before the child), or unknown to the book (a parent past the
 * stream's retention, or finished before the book began). A child goes to the reader of its
 * first parent, so a receiver's lines stay in one lane across a resharding; other shards go to
 * the reader with the fewest.
 */
final class ShardTracker {
    private final Map<String, ShardSplit> known = new LinkedHashMap<>();
    private final Map<String, Integer> owner = new HashMap<>();
    private final Set<String> finished = new HashSet<>();
    /** Who read each finished shard: where its children go. */
    private final Map<String, Integer> finishedOwner = new HashMap<>();

    /** Shards discovered (again): those not known yet and not finished are added. */
    void discovered(List<ShardSplit> splits) {
        for (ShardSplit split : splits) {
            if (!finished.contains(split.shardId) && !known.containsKey(split.shardId)) {
                known.put(split.shardId, split);
            }
        }
    }

    /** Restored from a checkpoint: a split, assigned to {@code reader} or not (-1). */
    void restore(ShardSplit split, int reader) {
        known.put(split.shardId, split);
        if (reader >= 0) {
            owner.put(split.shardId, reader);
        }
    }

    void restoreFinished(String shardId, int reader) {
        finished.add(shardId);
        finishedOwner.put(shardId, reader);
    }

    void finished(String shardId, int reader) {
        known.remove(shardId);
        Integer had = owner.remove(shardId);
        finished.add(shardId);
        finishedOwner.put(shardId, had == null ? reader : had);
    }

    /** Splits a reader had that were not checkpointed with it: to be assigned again. */
    void returned(List<ShardSplit> splits) {
        for (ShardSplit split : splits) {
            owner.remove(split.shardId);
            if (!finished.contains(split.shardId)) {
                known.put(split.shardId, split);
            }
        }
    }

    boolean isFinished(String shardId) {
        return finished.contains(shardId);
    }

    /**
     * The splits that can be read now, each with its reader (among {@code readers}, 0..n-1), and
     * marked assigned.
     */
    Map<Integer, List<ShardSplit>> assign(int readers) {
        Map<Integer, List<ShardSplit>> out = new HashMap<>();
        if (readers <= 0) {
            return out;
        }
        int[] load = new int[readers];
        for (int reader : owner.values()) {
            if (reader < readers) {
                load[reader]++;
            }
        }
        for (ShardSplit split : known.values()) {
            if (owner.containsKey(split.shardId) || !parentsDone(split)) {
                continue;
            }
            int reader = -1;
            for (String parent : split.parents) {
                Integer had = finishedOwner.get(parent);
                if (had != null && had < readers) {
                    reader = had;
                    break;
                }
            }
            if (reader < 0) {
                reader = 0;
                for (int i = 1; i < readers; i++) {
                    if (load[i] < load[reader]) {
                        reader = i;
                    }
                }
            }
            load[reader]++;
            owner.put(split.shardId, reader);
            out.computeIfAbsent(reader, r -> new ArrayList<>()).add(split);
        }
        return out;
    }

    private boolean parentsDone(ShardSplit split) {
        for (String parent : split.parents) {
            if (known.containsKey(parent)) {
                return false;
            }
        }
        return true;
    }

    /** Whether every known shard has been given to a reader (a bounded run then has no more). */
    boolean allAssigned() {
        for (String id : known.keySet()) {
            if (!owner.containsKey(id)) {
                return false;
            }
        }
        return true;
    }

    List<ShardSplit> unfinished() {
        return new ArrayList<>(known.values());
    }

    Integer ownerOf(String shardId) {
        return owner.get(shardId);
    }

    Map<String, Integer> finishedShards() {
        return finishedOwner;
    }
}
