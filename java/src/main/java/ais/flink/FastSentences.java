package ais.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.types.Row;

/**
 * The lane's plain sentences parsed in Java, before the Python parse operator: a batch of lines
 * ({@code Row(lane, String[])}, from {@link LineBatches}) becomes {@code Row(lane, LaneBatch)},
 * the lines Python must decide, each with its place in the batch, and the entries of the lines
 * decided here, each with its own place, which the Python operator puts in order among its own.
 *
 * <p>A line is decided here only when the Python reference ({@code ais_pipeline.rules.lane}) is
 * known to give exactly this entry for it, whatever the lane's state: a tag block with a plain
 * {@code c:} time no later than now, then one whole VDM/VDO sentence with a correct checksum, a
 * payload of a position or static report, nothing before or after it. Everything else (multipart
 * groups, other message types, lines without a time, a logger's timestamps, the US Coast Guard's
 * fields, damaged lines, JSON, archive rows) goes to Python as before. The golden cases of
 * {@code tests/golden/fast_sentences.json} hold both sides to it.
 *
 * <p>Two things of the lane's state make a plain sentence Python's: a Gatehouse {@code $PGHP}
 * time waiting for the next message, and an archive's header (whose rows count lines). A lane
 * that has shown either (a line with {@code $PGHP}, or one that names the MMSI and a time column
 * as a header does) sends all its lines to Python from then on; that is kept in checkpoints. A job
 * restored from state that has none of this operator's (a savepoint of a version without it) sends
 * every line to Python: what its lanes have shown is not known here.
 */
public final class FastSentences implements MapFunction<Row, Row>, CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    static final int MAX_LINE_CHARS = 4096;
    static final int MAX_PAYLOAD_CHARS = 200;
    static final long MS_THRESHOLD = 1_000_000_000_000L;
    static final char SEP = '\u001f';

    private final boolean enabled;
    private final Layout layout;
    private transient boolean laneOff;
    private transient ListState<Boolean> offState;

    /** {@code enabled} false: every line goes to Python (an input format other than NMEA). */
    public FastSentences(RowTypeInfo batchType, boolean enabled) {
        this.layout = new Layout(batchType);
        this.enabled = enabled;
    }

    /** What one plain sentence gives the watermark stage (a {@code parsed_type} entry). */
    static final class Entry {
        long assigned;
        String source;
        boolean received;
        long mmsi;
        String packed;
    }

    /** The {@code LaneBatch} record's columns, resolved by name. */
    static final class Layout implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        final int arity;
        final int lines;
        final int lineAt;
        final int fastAt;
        final int assigned;
        final int source;
        final int received;
        final int mmsi;
        final int packed;
        final int total;

        Layout(RowTypeInfo type) {
            arity = type.getArity();
            lines = RecordLayout.arrayField(type, "lines", Types.STRING);
            lineAt = RecordLayout.arrayField(type, "line_at", Types.INT);
            fastAt = RecordLayout.arrayField(type, "fast_at", Types.INT);
            assigned = RecordLayout.arrayField(type, "assigned", Types.LONG);
            source = RecordLayout.arrayField(type, "source", Types.STRING);
            received = RecordLayout.arrayField(type, "received", Types.BOOLEAN);
            mmsi = RecordLayout.arrayField(type, "mmsi", Types.LONG);
            packed = RecordLayout.arrayField(type, "packed", Types.STRING);
            total = RecordLayout.field(type, "total", Types.INT);
        }
    }

    @Override
    public Row map(Row batch) {
        String[] lines = (String[]) batch.getField(1);
        long now = System.currentTimeMillis();
        List<String> slow = new ArrayList<>();
        List<Integer> slowAt = new ArrayList<>();
        List<Entry> fast = new ArrayList<>(lines.length);
        List<Integer> fastAt = new ArrayList<>(lines.length);
        Entry entry = new Entry();
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (!laneOff && turnsLaneOff(line)) {
                laneOff = true; // also with the fast path off: a later run with it on restores this
            }
            if (enabled && !laneOff && parse(line, now, entry)) {
                fast.add(entry);
                fastAt.add(i);
                entry = new Entry();
            } else {
                slow.add(line);
                slowAt.add(i);
            }
        }
        Row out = new Row(layout.arity);
        out.setField(layout.lines, slow.toArray(new String[0]));
        out.setField(layout.lineAt, slowAt.toArray(new Integer[0]));
        out.setField(layout.fastAt, fastAt.toArray(new Integer[0]));
        Long[] assigned = new Long[fast.size()];
        String[] source = new String[fast.size()];
        Boolean[] received = new Boolean[fast.size()];
        Long[] mmsi = new Long[fast.size()];
        String[] packed = new String[fast.size()];
        for (int i = 0; i < assigned.length; i++) {
            Entry e = fast.get(i);
            assigned[i] = e.assigned;
            source[i] = e.source;
            received[i] = e.received;
            mmsi[i] = e.mmsi;
            packed[i] = e.packed;
        }
        out.setField(layout.assigned, assigned);
        out.setField(layout.source, source);
        out.setField(layout.received, received);
        out.setField(layout.mmsi, mmsi);
        out.setField(layout.packed, packed);
        out.setField(layout.total, lines.length);
        return Row.of(batch.getField(0), out);
    }

    /**
     * A line after which the lane's state may make a plain sentence Python's: a Gatehouse time,
     * or what may be an archive's header (the Python reference's condition for one: the MMSI
     * column and a time column named, in any case).
     */
    static boolean turnsLaneOff(String line) {
        if (line.contains("$PGHP")) {
            return true;
        }
        String text = line.toLowerCase(Locale.ROOT);
        return text.contains("mmsi")
                && (text.contains("basedatetime") || text.contains("base_date_time") || text.contains("# timestamp"));
    }

    /**
     * Whether {@code line} is a plain sentence, read at wall clock {@code nowMs}; if it is, its
     * entry is in {@code out} (the Python reference's {@code parsed_entry} of it).
     */
    static boolean parse(String line, long nowMs, Entry out) {
        int end = line.length();
        while (end > 0 && (line.charAt(end - 1) == '\n' || line.charAt(end - 1) == '\r')) {
            end--;
        }
        if (end == 0 || end > MAX_LINE_CHARS || line.charAt(0) != '\\') {
            return false;
        }
        for (int i = 0; i < end; i++) {
            char c = line.charAt(i);
            // Not text to the Python reference, or not plain ASCII (its checksum and its
            // stripping of whitespace work on code points).
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        int close = line.indexOf('\\', 1);
        if (close < 0 || close + 1 >= end || line.charAt(close + 1) != '!') {
            return false;
        }
        String tag = line.substring(1, close);
        int tagStar = tag.lastIndexOf('*');
        if (tagStar >= 0) {
            tag = tag.substring(0, tagStar);
        }
        long ts = -1;
        String receiver = "";
        for (String item : tag.split(",", -1)) {
            int colon = item.indexOf(':');
            if (colon < 0) {
                return false;
            }
            String key = item.substring(0, colon);
            String value = item.substring(colon + 1);
            if (key.equals("c")) {
                if (value.isEmpty() || value.length() > 15) {
                    return false;
                }
                for (int i = 0; i < value.length(); i++) {
                    char c = value.charAt(i);
                    if (c < '0' || c > '9') {
                        return false;
                    }
                }
                long t = Long.parseLong(value);
                ts = t >= MS_THRESHOLD ? t : t * 1000;
            } else if (key.equals("s")) {
                receiver = value;
            }
        }
        if (ts < 0 || ts > nowMs) {
            return false;
        }
        String text = line.substring(close + 1, end);
        if (text.length() < 6 || !(text.startsWith("VDM", 3) || text.startsWith("VDO", 3))) {
            return false;
        }
        int star = text.indexOf('*');
        if (star < 0 || text.length() != star + 3) {
            return false;
        }
        int high = hex(text.charAt(star + 1));
        int low = hex(text.charAt(star + 2));
        if (high < 0 || low < 0) {
            return false;
        }
        int expected = (high << 4) | low;
        int sum = 0;
        for (int i = 1; i < star; i++) {
            sum ^= text.charAt(i);
        }
        if (sum != expected) {
            return false;
        }
        String[] parts = text.substring(1, star).split(",", -1);
        if (parts.length != 7 || !parts[1].equals("1") || !parts[2].equals("1") || parts[6].length() != 1) {
            return false;
        }
        int fill = parts[6].charAt(0) - '0';
        String payload = parts[5];
        if (fill < 0 || fill > 5 || payload.length() < 7 || payload.length() > MAX_PAYLOAD_CHARS) {
            return false;
        }
        long header = 0;
        for (int i = 0; i < payload.length(); i++) {
            int v = armored(payload.charAt(i));
            if (v < 0) {
                return false;
            }
            if (i < 7) {
                header = (header << 6) | v;
            }
        }
        int type = (int) (header >> 36);
        if (!(type == 1 || type == 2 || type == 3 || type == 18 || type == 19 || type == 27 || type == 5 || type == 24)) {
            return false;
        }
        out.assigned = ts;
        out.source = receiver;
        // Stamped on receipt by a network input or the relay: the Python reference's test
        // (ais_pipeline.rules.feeds.stamped_on_receipt), to the character.
        out.received = line.contains(",t:received*");
        out.mmsi = (header >> 4) & 0x3FFFFFFFL;
        out.packed = new StringBuilder(end + 48)
                .append(ts).append(SEP)
                .append(type).append(SEP)
                .append(SEP)
                .append(payload).append(SEP)
                .append(fill).append(SEP)
                .append(receiver).append(SEP)
                .append(line, 0, end)
                .toString();
        return true;
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    }

    /** The 6-bit value of an armored payload character, or -1. */
    private static int armored(char ch) {
        int c = ch - 48;
        if (0 <= c && c <= 39) {
            return c;
        }
        if (48 <= c && c <= 71) {
            return c - 8;
        }
        return -1;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        offState.update(List.of(laneOff));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        offState = context.getOperatorStateStore()
                .getUnionListState(new ListStateDescriptor<>("fast-sentences-lane-off", Types.BOOLEAN));
        laneOff = false;
        boolean recorded = false;
        for (Boolean off : offState.get()) {
            recorded = true;
            laneOff |= off; // rescaled: lanes change, so any lane that was off turns every one off
        }
        if (context.isRestored() && !recorded) {
            // State of a job without this operator: the lanes' Gatehouse times and archive headers
            // are in the parse operator's state, unseen here. Python decides every line.
            laneOff = true;
        }
    }
}
