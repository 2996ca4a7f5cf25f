package ais.flink.kinesis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The enumerator's book of shards: parents before children, children on their parent's reader. */
class ShardTrackerTest {
    static ShardSplit shard(String id, String... parents) {
        return new ShardSplit("s", id, Arrays.asList(parents), ShardSplit.Start.TRIM_HORIZON, "", Long.MAX_VALUE,
                false);
    }

    static Map<Integer, List<String>> ids(Map<Integer, List<ShardSplit>> assignment) {
        return assignment.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                e -> e.getValue().stream().map(ShardSplit::splitId).sorted().collect(Collectors.toList())));
    }

    @Test
    void aSplitShardIsReadToItsEndBeforeItsChildrenWhichGoToItsReader() {
        ShardTracker tracker = new ShardTracker();
        tracker.discovered(Arrays.asList(shard("p"), shard("other"), shard("a", "p"), shard("b", "p")));
        Map<Integer, List<String>> first = ids(tracker.assign(2));
        assertEquals(2, first.size());
        int parentReader = first.get(0).contains("p") ? 0 : 1;
        assertEquals(Collections.singletonList("p"), first.get(parentReader));
        assertTrue(ids(tracker.assign(2)).isEmpty()); // the children wait
        assertFalse(tracker.allAssigned());

        tracker.finished("p", parentReader);
        assertEquals(Collections.singletonMap(parentReader, Arrays.asList("a", "b")), ids(tracker.assign(2)));
        assertTrue(tracker.allAssigned());
        // found again at the next discovery: a finished shard is not read twice
        tracker.discovered(Arrays.asList(shard("p"), shard("a", "p"), shard("b", "p")));
        assertTrue(ids(tracker.assign(2)).isEmpty());
    }

    @Test
    void aMergedShardWaitsForBothParents() {
        ShardTracker tracker = new ShardTracker();
        tracker.discovered(Arrays.asList(shard("a"), shard("b"), shard("c", "a", "b")));
        Map<Integer, List<String>> first = ids(tracker.assign(2));
        assertEquals(2, first.size());
        tracker.finished("a", 0);
        assertTrue(ids(tracker.assign(2)).isEmpty());
        tracker.finished("b", 1);
        assertEquals(Collections.singletonMap(0, Collections.singletonList("c")), ids(tracker.assign(2)));
    }

    @Test
    void aParentPastTheRetentionDoesNotHoldItsChildBack() {
        ShardTracker tracker = new ShardTracker();
        tracker.discovered(Collections.singletonList(shard("child", "expired")));
        assertEquals(Collections.singletonMap(0, Collections.singletonList("child")), ids(tracker.assign(1)));
    }

    @Test
    void splitsReturnedByAFailedReaderAreAssignedAgain() {
        ShardTracker tracker = new ShardTracker();
        tracker.discovered(Collections.singletonList(shard("a")));
        assertEquals(1, tracker.assign(1).size());
        tracker.returned(Collections.singletonList(shard("a").after("42")));
        List<ShardSplit> again = tracker.assign(1).get(0);
        assertEquals("42", again.get(0).startValue);
    }

    @Test
    void splitsAndTheEnumeratorsStateSurviveTheirSerializers() throws Exception {
        ShardSplit split = new ShardSplit("s", "c", Arrays.asList("a", "b"), ShardSplit.Start.AT_TIMESTAMP, "1000",
                2000L, true);
        ShardSplit.Serializer serializer = new ShardSplit.Serializer();
        ShardSplit back = serializer.deserialize(1, serializer.serialize(split));
        assertEquals(split.toString(), back.toString());
        assertEquals(split.parents, back.parents);
        assertEquals(2000L, back.stopAt);

        EnumeratorState state = new EnumeratorState(Collections.singletonList(split), Collections.singletonList(1),
                Collections.singletonMap("p", 0), true);
        EnumeratorState.Serializer states = new EnumeratorState.Serializer();
        EnumeratorState restored = states.deserialize(1, states.serialize(state));
        assertEquals(Collections.singletonMap("p", 0), restored.finished);
        assertEquals(Collections.singletonList(1), restored.owners);
        assertTrue(restored.discovered);
    }

    @Test
    void aRecordsLinesAreAFilesLines() {
        assertArrayEquals(new String[] {"a", "b", "c"}, ShardFetcher.lines("a\r\nb\nc\n".getBytes()));
        assertArrayEquals(new String[] {""}, ShardFetcher.lines(new byte[0]));
        assertArrayEquals(new String[] {"\ufffd\ufffd"}, ShardFetcher.lines(new byte[] {(byte) 0xff, (byte) 0xfe}));
        String[] cut = ShardFetcher.lines(new byte[9000]);
        assertEquals(3, cut.length); // lines of at most 4,096 bytes, nothing lost
        assertEquals(9000, Arrays.stream(cut).mapToInt(String::length).sum());
    }
}
