package ais.flink;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The watermark of one input lane, following its receivers: the rule of
 * {@code ais_pipeline.rules.watermarks.ReceiverWatermarks} (the reference; docs/watermarks.md states it,
 * {@code tests/golden/watermarks.json} holds cases both implementations must pass).
 *
 * <p>The consensus is the median event time of the last {@code consensusLines} lines with a
 * time; a line moves its source's clock unless it is more than the maximum clock skew ahead of
 * both the consensus and the lane's frontier (the newest time that moved a clock); a source
 * (receiver) is current while its clock is no more than the idle timeout behind the consensus,
 * and forgotten once it falls further behind; the watermark is the oldest clock of the current
 * sources minus the out-of-orderness, minus 1 ms, never moving back, and none before
 * {@code warmUpLines} lines with a time (those are held, and move the clocks at the warm-up's
 * end, judged by its consensus). Far-ahead lines move the clocks once {@code jumpLines} of them
 * follow one another (a jump of the whole lane), and are dropped when a line at the lane's time
 * comes after them.
 *
 * <p>A live lane ({@code receivedLag} of 0 or more: the job's own network input) also has a
 * received clock: its lines stamped on receipt ({@link #observeReceived}) move it to their time and
 * take no other part; {@link #tick} moves it to the wall clock less the lag once the lane has been
 * quiet that long. Sources are then current while within the idle timeout of the later of the
 * consensus and the received clock, and the watermark is the received clock less 1 ms, or the
 * receivers' rule's if lower (during their warm-up, the oldest line held less the
 * out-of-orderness).
 */
final class ReceiverClocks {
    static final long TIME_UNKNOWN = Long.MIN_VALUE;
    static final int NONE = 0;
    static final int AHEAD = 1;
    static final int BEHIND = 2;

    private final long outOfOrderness;
    private final long idleTimeout;
    private final long maxClockSkew;
    private final int consensusLines;
    private final int warmUpLines;
    private final int jumpLines;
    private final long receivedLag;

    long watermark = TIME_UNKNOWN;
    /** The received clock of a live lane (TIME_UNKNOWN before its first stamped line or tick). */
    long received = TIME_UNKNOWN;
    long seen;
    private long frontier = TIME_UNKNOWN;
    private final List<String> heldSources = new ArrayList<>(); // the warm-up lines, until its end
    private final List<Long> heldTimes = new ArrayList<>();
    private List<String> aheadSources = new ArrayList<>(); // far-ahead lines, until they are a jump
    private List<Long> aheadTimes = new ArrayList<>();
    private final ArrayDeque<Long> recent = new ArrayDeque<>();
    private long[] sorted;
    private int size;
    private final Map<String, Long> newest = new HashMap<>();
    private final List<Source> byNewest = new ArrayList<>(); // sorted by (newest, name)

    private static final class Source implements Comparable<Source> {
        final long newest;
        final String name;

        Source(long newest, String name) {
            this.newest = newest;
            this.name = name;
        }

        @Override
        public int compareTo(Source o) {
            int c = Long.compare(newest, o.newest);
            return c != 0 ? c : name.compareTo(o.name);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Source && compareTo((Source) o) == 0;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(newest) * 31 + name.hashCode();
        }
    }

    ReceiverClocks(
            long outOfOrderness, long idleTimeout, long maxClockSkew, int consensusLines, int warmUpLines, int jumpLines) {
        this(outOfOrderness, idleTimeout, maxClockSkew, consensusLines, warmUpLines, jumpLines, -1);
    }

    /** {@code receivedLag}: a live lane's lag behind the wall clock; -1 for a lane that is not live. */
    ReceiverClocks(
            long outOfOrderness,
            long idleTimeout,
            long maxClockSkew,
            int consensusLines,
            int warmUpLines,
            int jumpLines,
            long receivedLag) {
        this.receivedLag = receivedLag;
        this.outOfOrderness = outOfOrderness;
        this.idleTimeout = idleTimeout;
        this.maxClockSkew = maxClockSkew;
        this.consensusLines = consensusLines;
        this.warmUpLines = warmUpLines;
        this.jumpLines = jumpLines;
        this.sorted = new long[consensusLines + 1];
    }

    long consensus() {
        return size == 0 ? TIME_UNKNOWN : sorted[(size - 1) / 2];
    }

    /** The lane's usual time between lines: the span of the middle half of the recent lines' times over their count. */
    long pace() {
        int lo = size / 4;
        int hi = 3 * size / 4;
        return hi > lo ? Math.floorDiv(sorted[hi] - sorted[lo], hi - lo) : 0;
    }

    boolean live() {
        return receivedLag >= 0;
    }

    /**
     * A line stamped on receipt: on a live lane it moves the received clock (and nothing else);
     * elsewhere it is a line like any other.
     */
    int observeReceived(String source, long ts) {
        if (!live()) {
            return observe(source, ts);
        }
        if (ts != TIME_UNKNOWN && ts > received) {
            received = ts;
            advance(consensus());
        }
        return NONE;
    }

    /** Whether the lane follows the wall clock: live, and it has had a line stamped on receipt. */
    boolean followsClock() {
        return live() && received != TIME_UNKNOWN;
    }

    /**
     * The wall clock of a live lane that has had no line for the lag (nothing for other lanes, and
     * for a live lane without a line stamped on receipt: its times are its receivers').
     */
    void tick(long nowMs) {
        if (!followsClock()) {
            return;
        }
        long clock = nowMs - receivedLag;
        if (clock > received) {
            received = clock;
            advance(consensus());
        }
    }

    /** One line's source and event time; returns {@link #AHEAD}, {@link #BEHIND} or {@link #NONE}. */
    int observe(String source, long ts) {
        if (ts == TIME_UNKNOWN) {
            return NONE;
        }
        int flag = NONE;
        if (seen >= warmUpLines && !byNewest.isEmpty()) { // a consensus of a few lines says little
            Long own = newest.get(source);
            int n = byNewest.size() - (own == null ? 0 : 1);
            long reference;
            long front;
            long ahead = maxClockSkew;
            if (n > 0) { // the other current sources' median
                int k = (n - 1) / 2;
                if (own != null && k >= Collections.binarySearch(byNewest, new Source(own, source))) {
                    k++;
                }
                reference = front = byNewest.get(k).newest;
            } else { // a lone source, against its own lines at the lane's pace
                reference = front = own;
                if (!aheadTimes.isEmpty()) { // a jump under way: the line before, held with it
                    front = Math.max(front, aheadTimes.get(aheadTimes.size() - 1));
                }
                ahead += jumpLines * pace();
            }
            if (ts > front + ahead) {
                flag = AHEAD;
            } else if (ts < reference - maxClockSkew) {
                flag = BEHIND;
            }
        }
        remember(ts);
        seen++;
        if (seen < warmUpLines) {
            heldSources.add(source);
            heldTimes.add(ts);
            return flag;
        }
        long consensus = consensus();
        if (!heldSources.isEmpty()) { // the end of the warm-up: its lines, in input order
            for (int i = 0; i < heldSources.size(); i++) {
                judge(heldSources.get(i), heldTimes.get(i), consensus);
            }
            heldSources.clear();
            heldTimes.clear();
        }
        judge(source, ts, consensus);
        advance(consensus);
        return flag;
    }

    /**
     * The line moves its source's clock unless it is far ahead of the consensus and the frontier;
     * far-ahead lines are held until {@code jumpLines} of them follow one another (a jump of the
     * whole lane), and dropped when a line at the lane's time comes after them.
     */
    private void judge(String source, long ts, long consensus) {
        long reference = Math.max(consensus, frontier);
        if (ts > reference + maxClockSkew) {
            aheadSources.add(source);
            aheadTimes.add(ts);
            if (aheadSources.size() >= jumpLines) {
                for (int i = 0; i < aheadSources.size(); i++) {
                    move(aheadSources.get(i), aheadTimes.get(i));
                }
                aheadSources.clear();
                aheadTimes.clear();
            }
            return;
        }
        move(source, ts);
        if (!aheadSources.isEmpty() && ts >= reference - maxClockSkew) { // at the lane's time: they were strays
            List<String> keptSources = new ArrayList<>();
            List<Long> keptTimes = new ArrayList<>();
            for (int i = 0; i < aheadSources.size(); i++) {
                if (aheadTimes.get(i) <= ts + maxClockSkew) {
                    keptSources.add(aheadSources.get(i));
                    keptTimes.add(aheadTimes.get(i));
                }
            }
            aheadSources = keptSources;
            aheadTimes = keptTimes;
        }
    }

    /** The line moves its source's clock (and the lane's frontier). */
    private void move(String source, long ts) {
        if (ts > frontier) {
            frontier = ts;
        }
        Long previous = newest.get(source);
        if (previous == null || ts > previous) {
            if (previous != null) {
                unlist(new Source(previous, source));
            }
            newest.put(source, ts);
            list(new Source(ts, source));
        }
    }

    private void remember(long ts) {
        recent.addLast(ts);
        insert(ts);
        if (recent.size() > consensusLines) {
            remove(recent.removeFirst());
        }
    }

    private void insert(long ts) {
        int at = Arrays.binarySearch(sorted, 0, size, ts);
        if (at < 0) {
            at = -at - 1;
        }
        System.arraycopy(sorted, at, sorted, at + 1, size - at);
        sorted[at] = ts;
        size++;
    }

    private void remove(long ts) {
        int at = Arrays.binarySearch(sorted, 0, size, ts);
        System.arraycopy(sorted, at + 1, sorted, at, size - at - 1);
        size--;
    }

    private void list(Source s) {
        int at = Collections.binarySearch(byNewest, s);
        byNewest.add(at < 0 ? -at - 1 : at, s);
    }

    private void unlist(Source s) {
        int at = Collections.binarySearch(byNewest, s);
        if (at >= 0) {
            byNewest.remove(at);
        }
    }

    private void advance(long consensus) {
        long now = Math.max(consensus, received);
        long horizon = now == TIME_UNKNOWN ? TIME_UNKNOWN : now - idleTimeout;
        int forgotten = 0;
        while (forgotten < byNewest.size() && byNewest.get(forgotten).newest < horizon) {
            newest.remove(byNewest.get(forgotten).name);
            forgotten++;
        }
        if (forgotten > 0) {
            byNewest.subList(0, forgotten).clear();
        }
        long candidate = byNewest.isEmpty() ? TIME_UNKNOWN : byNewest.get(0).newest - outOfOrderness - 1;
        if (received != TIME_UNKNOWN) {
            candidate = candidate == TIME_UNKNOWN ? received - 1 : Math.min(candidate, received - 1);
            for (long held : heldTimes) { // receivers still in their warm-up hold it as their clocks will
                candidate = Math.min(candidate, held - outOfOrderness - 1);
            }
        }
        if (candidate > watermark) {
            watermark = candidate;
        }
    }

    // -- checkpoints ----------------------------------------------------------------------------

    LaneState snapshot(int subtask, int parallelism) {
        LaneState s = new LaneState();
        s.subtask = subtask;
        s.parallelism = parallelism;
        s.watermark = watermark;
        s.seen = seen;
        s.frontier = frontier;
        s.received = received;
        s.heldSources = heldSources.toArray(new String[0]);
        s.heldTimes = new long[heldTimes.size()];
        for (int j = 0; j < heldTimes.size(); j++) {
            s.heldTimes[j] = heldTimes.get(j);
        }
        s.aheadSources = aheadSources.toArray(new String[0]);
        s.aheadTimes = new long[aheadTimes.size()];
        for (int j = 0; j < aheadTimes.size(); j++) {
            s.aheadTimes[j] = aheadTimes.get(j);
        }
        s.recent = new long[recent.size()];
        int i = 0;
        for (Long ts : recent) {
            s.recent[i++] = ts;
        }
        s.sources = new String[newest.size()];
        s.newest = new long[newest.size()];
        i = 0;
        for (Map.Entry<String, Long> e : newest.entrySet()) {
            s.sources[i] = e.getKey();
            s.newest[i++] = e.getValue();
        }
        return s;
    }

    /**
     * Take a lane's state; several (a rescaled restore) merge: the highest watermark and frontier,
     * every source at its newest, the held warm-up lines of each (they move the clocks at the next
     * line once the merged lanes have seen the warm-up).
     */
    void restore(LaneState s) {
        watermark = Math.max(watermark, s.watermark);
        frontier = Math.max(frontier, s.frontier);
        received = Math.max(received, s.received);
        seen += s.seen;
        for (int i = 0; s.heldSources != null && i < s.heldSources.length; i++) { // null: an older checkpoint
            heldSources.add(s.heldSources[i]);
            heldTimes.add(s.heldTimes[i]);
        }
        for (int i = 0; s.aheadSources != null && i < s.aheadSources.length; i++) {
            aheadSources.add(s.aheadSources[i]);
            aheadTimes.add(s.aheadTimes[i]);
        }
        for (long ts : s.recent) {
            remember(ts);
        }
        for (int i = 0; i < s.sources.length; i++) {
            Long previous = newest.get(s.sources[i]);
            if (previous == null || s.newest[i] > previous) {
                if (previous != null) {
                    unlist(new Source(previous, s.sources[i]));
                }
                newest.put(s.sources[i], s.newest[i]);
                list(new Source(s.newest[i], s.sources[i]));
            }
        }
    }

    Iterator<String> sources() {
        return newest.keySet().iterator();
    }

    /** The state of one lane in checkpoints: a Flink POJO. */
    public static class LaneState {
        public int subtask;
        public int parallelism;
        public long watermark;
        public long seen;
        public long frontier = TIME_UNKNOWN;
        public long received = TIME_UNKNOWN;
        public String[] heldSources = new String[0];
        public long[] heldTimes = new long[0];
        public String[] aheadSources = new String[0];
        public long[] aheadTimes = new long[0];
        public long[] recent = new long[0];
        public String[] sources = new String[0];
        public long[] newest = new long[0];

        public LaneState() {}
    }
}
