package ais.flink.feeds;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The lines of a byte stream that comes in chunks (the rule of the Python reference,
 * {@code ais_pipeline.rules.feeds.LineSplitter}, golden cases shared): split on {@code \n},
 * {@code \r} or {@code \r\n}; bytes that are not UTF-8 replaced; a line longer than
 * {@link #MAX_LINE_BYTES} cut there and passed on (the job dead-letters it), counted in
 * {@link #tooLong}.
 */
public final class LineSplitter {
    public static final int MAX_LINE_BYTES = 4096;

    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
    private boolean afterCr;
    public long tooLong;

    /** The whole lines that {@code chunk} completes. */
    public List<String> feed(byte[] chunk, int offset, int length) {
        List<String> lines = new ArrayList<>();
        int end = offset + length;
        for (int i = offset; i < end; i++) {
            byte b = chunk[i];
            if (b == '\n') {
                if (afterCr) {
                    afterCr = false;
                    continue;
                }
                lines.add(take());
            } else if (b == '\r') {
                afterCr = true;
                lines.add(take());
                continue;
            } else {
                partial.write(b);
                if (partial.size() > MAX_LINE_BYTES) {
                    byte[] all = partial.toByteArray();
                    lines.add(new String(all, 0, MAX_LINE_BYTES, StandardCharsets.UTF_8));
                    partial.reset();
                    partial.write(all, MAX_LINE_BYTES, all.length - MAX_LINE_BYTES);
                    tooLong++;
                }
            }
            afterCr = false;
        }
        return lines;
    }

    /** The cuts since the last call (for a counter that is kept up to date). */
    public long takeTooLong() {
        long n = tooLong;
        tooLong = 0;
        return n;
    }

    /** What is left when the stream ends: a last line without a line break, or null. */
    public String end() {
        afterCr = false;
        return partial.size() == 0 ? null : take();
    }

    private String take() {
        String line = new String(partial.toByteArray(), StandardCharsets.UTF_8);
        partial.reset();
        return line;
    }
}
