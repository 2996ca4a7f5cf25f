package ais.flink.feeds;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** A feed whose lines arrive on a thread of their own (UDP datagrams, MQTT messages) into a bounded queue. */
abstract class QueuedFeed implements Feed {
    static final String WAKE_UP = new String("wake up"); // compared by identity, never emitted
    protected final BlockingQueue<String> queue;
    protected final FeedCounts counts;

    QueuedFeed(int capacity, FeedCounts counts) {
        this.queue = new ArrayBlockingQueue<>(capacity + 1); // + room for a wake-up
        this.counts = counts;
    }

    @Override
    public List<String> poll(long timeoutMillis) throws InterruptedException {
        List<String> lines = new ArrayList<>();
        String first = queue.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        if (first == null) {
            return lines;
        }
        if (first != WAKE_UP) {
            lines.add(first);
        }
        queue.drainTo(lines, 10_000);
        lines.removeIf(line -> line == WAKE_UP);
        return lines;
    }

    @Override
    public void wakeUp() {
        queue.offer(WAKE_UP);
    }
}
