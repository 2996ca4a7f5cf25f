package ais.flink;

import java.io.Serializable;

/**
 * The window arithmetic of the job, as {@code ais_pipeline.rules.windows.WindowSpec} defines it
 * (the Python class is the reference; the golden cases in {@code tests/golden/windows.json} run
 * against both). Both window kinds are made of panes of {@code gcd(tumbling size, slide)}; a
 * window takes contributions until {@code end - 1 + lateness + grace <= watermark} (Flink's rule,
 * with the grace: contributions decided in time but delivered later, such as vessel time).
 */
public final class WindowSpec implements Serializable {
    private static final long serialVersionUID = 2L;

    public final long windowMs;
    public final long slideSizeMs;
    public final long slideMs;
    public final long latenessMs;
    public final long graceMs;
    public final long paneMs;

    public WindowSpec(long windowMs, long slideSizeMs, long slideMs, long latenessMs) {
        this(windowMs, slideSizeMs, slideMs, latenessMs, 0);
    }

    public WindowSpec(long windowMs, long slideSizeMs, long slideMs, long latenessMs, long graceMs) {
        if (windowMs <= 0 || slideMs <= 0 || slideSizeMs <= 0 || slideSizeMs % slideMs != 0 || latenessMs < 0
                || graceMs < 0) {
            throw new IllegalArgumentException("bad window spec");
        }
        this.windowMs = windowMs;
        this.slideSizeMs = slideSizeMs;
        this.slideMs = slideMs;
        this.latenessMs = latenessMs;
        this.graceMs = graceMs;
        this.paneMs = gcd(windowMs, slideMs);
    }

    static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** The step the job's watermark moves in: every window end and the lateness are multiples of it. */
    public long watermarkStepMs() {
        long step = latenessMs == 0 ? paneMs : gcd(paneMs, latenessMs);
        return graceMs == 0 ? step : gcd(step, graceMs);
    }

    public long paneStart(long ts) {
        return ts - Math.floorMod(ts, paneMs);
    }

    public long tumblingEnd(long ts) {
        return ts - Math.floorMod(ts, windowMs) + windowMs;
    }

    /** End of the last sliding window that contains {@code ts}. */
    public long lastSlidingEnd(long ts) {
        return ts - Math.floorMod(ts, slideMs) + slideSizeMs;
    }

    /** End of the first sliding window that contains {@code ts}. */
    public long firstSlidingEnd(long ts) {
        return ts - Math.floorMod(ts, slideMs) + slideMs;
    }

    public boolean closed(long windowEnd, long watermark) {
        return windowEnd - 1 + latenessMs + graceMs <= watermark;
    }

    /** Watermark from which no window containing the pane can fire any more. */
    public long paneRetiredAt(long paneStart) {
        return Math.max(tumblingEnd(paneStart), lastSlidingEnd(paneStart)) - 1 + latenessMs + graceMs;
    }

    /**
     * The first end after {@code boundary} of a window (of either kind) that contains the pane;
     * {@link Long#MAX_VALUE} when every one of them ends at or before it.
     */
    public long nextEndAfter(long paneStart, long boundary) {
        long next = Long.MAX_VALUE;
        long tumbling = tumblingEnd(paneStart);
        if (tumbling > boundary) {
            next = tumbling;
        }
        long sliding = Math.max(firstSlidingEnd(paneStart), firstSlidingEnd(boundary));
        if (sliding <= lastSlidingEnd(paneStart)) {
            next = Math.min(next, sliding);
        }
        return next;
    }

    /** The last window end (of either kind) that contains the pane. */
    public long lastEnd(long paneStart) {
        return Math.max(tumblingEnd(paneStart), lastSlidingEnd(paneStart));
    }
}
