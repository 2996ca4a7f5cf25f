package ais.flink.feeds;

import java.io.IOException;
import java.util.List;

/**
 * One live feed, read by the source's fetcher thread: {@link #poll} returns the lines received
 * since the last call, each already stamped ({@link Tagging}), waiting up to a timeout for the
 * first. A feed never throws for what its senders do (a sender that closes, says nothing or
 * sends bytes that are not text): it reconnects, counts and goes on.
 */
interface Feed extends AutoCloseable {
    List<String> poll(long timeoutMillis) throws IOException, InterruptedException;

    /** Make a {@link #poll} that waits return at once. */
    void wakeUp();

    @Override
    void close() throws IOException;
}
