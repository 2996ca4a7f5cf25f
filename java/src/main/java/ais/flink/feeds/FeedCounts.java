package ais.flink.feeds;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * What a feed did, as the source's metrics (web UI, REST API, Prometheus): lines received,
 * lines stamped on receipt, lines dropped (UDP, when the buffer is full), cut (longer than
 * {@link LineSplitter#MAX_LINE_BYTES}), connections made and lost; for UDP also the datagrams the
 * kernel dropped before they could be read (its socket buffer full).
 */
public final class FeedCounts {
    public final AtomicLong lines = new AtomicLong();
    public final AtomicLong stamped = new AtomicLong();
    public final AtomicLong dropped = new AtomicLong();
    public final AtomicLong tooLong = new AtomicLong();
    public final AtomicLong connections = new AtomicLong();
    public final AtomicLong disconnects = new AtomicLong();
    /** UDP: datagrams the kernel dropped before the source could read them (-1: unknown). */
    volatile LongSupplier kernelDrops = () -> -1L;

    void register(MetricGroup group) {
        gauge(group, "feed_lines", lines);
        gauge(group, "feed_stamped", stamped);
        gauge(group, "feed_dropped", dropped);
        gauge(group, "feed_too_long", tooLong);
        gauge(group, "feed_connections", connections);
        gauge(group, "feed_disconnects", disconnects);
        group.gauge("feed_dropped_by_kernel", (Gauge<Long>) () -> kernelDrops.getAsLong());
    }

    private static void gauge(MetricGroup group, String name, AtomicLong value) {
        group.gauge(name, (Gauge<Long>) value::get);
    }

    /** The line as the job gets it: stamped when it has no tag block, and counted. */
    String received(String line, String station, long receivedMs) {
        lines.incrementAndGet();
        String tagged = Tagging.tag(line, station, receivedMs);
        if (tagged != line) {
            stamped.incrementAndGet();
        }
        return tagged;
    }

    @Override
    public String toString() {
        return String.format(
                "%d lines (%d stamped on receipt), %d dropped (%d by the kernel), %d cut as too long, %d connections,"
                        + " %d lost",
                lines.get(), stamped.get(), dropped.get(), kernelDrops.getAsLong(), tooLong.get(), connections.get(),
                disconnects.get());
    }
}
