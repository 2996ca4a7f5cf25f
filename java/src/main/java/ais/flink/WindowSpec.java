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
    private static final long serialVersionUID = 3L;

    public final long windowMs;
    public final long slideSizeMs;
    public final long slideMs;
    public final long latenessMs;
    public final long graceMs;
    public final long paneMs;
    /** The window kinds computed (a kind left out fires nothing and keeps no pane for itself). */
    public final boolean tumbling;

    public final boolean sliding;

    public WindowSpec(long windowMs, long slideSizeMs, long slideMs, long latenessMs) {
        this(windowMs, slideSizeMs, slideMs, latenessMs, 0);
    }

    public WindowSpec(long windowMs, long slideSizeMs, long slideMs, long latenessMs, long graceMs) {
        this(windowMs, slideSizeMs, slideMs, latenessMs, graceMs, true, true);
    }

    public WindowSpec(
            long windowMs,
            long slideSizeMs,
            long slideMs,
            long latenessMs,
            long graceMs,
            boolean tumbling,
            boolean sliding) {
        if (windowMs <= 0 || slideMs <= 0 || slideSizeMs <= 0 || slideSizeMs % slideMs != 0 || latenessMs < 0
                || graceMs < 0 || !(tumbling || sliding)) {
            throw new IllegalArgumentException("bad window spec");
        }
        this.tumbling = tumbling;
        this.sliding = sliding;
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

    /** Watermark from which no window (of a kind computed) containing the pane can fire any more. */
    public long paneRetiredAt(long paneStart) {
        return lastEnd(paneStart) - 1 + latenessMs + graceMs;
    }

    /**
     * The first end after {@code boundary} of a window (of a kind computed) that contains the pane;
     * {@link Long#MAX_VALUE} when every one of them ends at or before it.
     */
    public long nextEndAfter(long paneStart, long boundary) {
        long next = Long.MAX_VALUE;
        long tumblingNext = tumblingEnd(paneStart);
        if (tumbling && tumblingNext > boundary) {
            next = tumblingNext;
        }
        long slidingNext = Math.max(firstSlidingEnd(paneStart), firstSlidingEnd(boundary));
        if (sliding && slidingNext <= lastSlidingEnd(paneStart)) {
            next = Math.min(next, slidingNext);
        }
        return next;
    }

    /** The last window end (of a kind computed) that contains the pane. */
    public long lastEnd(long paneStart) {
        return Math.max(tumbling ? tumblingEnd(paneStart) : 0, sliding ? lastSlidingEnd(paneStart) : 0);
    }
}
