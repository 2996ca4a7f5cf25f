package ais.flink.feeds;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code tcp://HOST:PORT}: a server that sends lines (AIS-catcher {@code -S}, an aggregator),
 * read by the fetcher thread itself, so a job that is slow stops reading and the sender's TCP
 * window fills (back-pressure: nothing lost). When the server closes (or cannot be reached) it
 * connects again after 1 s, doubling to 30 s; a line cut by the close is passed on as it is (the
 * job dead-letters it). With a {@code login} line, it is sent first on every connection. The
 * station is {@code station}, else {@code HOST:PORT}.
 */
final class TcpClientFeed implements Feed {
    private static final Logger LOG = LoggerFactory.getLogger(TcpClientFeed.class);
    static final long FIRST_RETRY_MS = 1_000;
    static final long LAST_RETRY_MS = 30_000;

    private final String host;
    private final int port;
    private final String station;
    private final String login;
    private final FeedCounts counts;
    private final byte[] buffer = new byte[65_536];
    private Socket socket;
    private InputStream in;
    private LineSplitter splitter;
    private long retryMs = FIRST_RETRY_MS;
    private long nextAttempt;
    private volatile boolean closed;

    TcpClientFeed(String host, int port, String station, String login, FeedCounts counts) {
        this.host = host;
        this.port = port;
        this.station = station.isEmpty() ? host + ":" + port : station;
        this.login = login;
        this.counts = counts;
    }

    @Override
    public List<String> poll(long timeoutMillis) throws InterruptedException {
        List<String> lines = new ArrayList<>();
        if (socket == null && !connect(timeoutMillis)) {
            return lines;
        }
        try {
            socket.setSoTimeout((int) Math.max(1, timeoutMillis));
            int n = in.read(buffer);
            long now = System.currentTimeMillis();
            if (n < 0) {
                LOG.info("tcp feed {}:{} closed the connection; connecting again", host, port);
                lost(lines, now);
                return lines;
            }
            for (String line : splitter.feed(buffer, 0, n)) {
                lines.add(counts.received(line, station, now));
            }
            counts.tooLong.addAndGet(splitter.takeTooLong());
        } catch (SocketTimeoutException e) {
            // nothing within the timeout
        } catch (IOException e) {
            LOG.warn("tcp feed {}:{} broke ({}); connecting again", host, port, e.toString());
            lost(lines, System.currentTimeMillis());
        }
        return lines;
    }

    private boolean connect(long timeoutMillis) throws InterruptedException {
        long now = System.currentTimeMillis();
        if (closed || now < nextAttempt) {
            Thread.sleep(Math.max(0, Math.min(timeoutMillis, nextAttempt - now)));
            return false;
        }
        Socket attempt = new Socket();
        try {
            attempt.connect(new InetSocketAddress(host, port), 2_000);
            if (!login.isEmpty()) {
                attempt.getOutputStream().write((login + "\r\n").getBytes(StandardCharsets.UTF_8));
                attempt.getOutputStream().flush();
            }
            socket = attempt;
            in = attempt.getInputStream();
            splitter = new LineSplitter();
            retryMs = FIRST_RETRY_MS;
            counts.connections.incrementAndGet();
            LOG.info("tcp feed: connected to {}:{}", host, port);
            return true;
        } catch (IOException e) {
            closeQuietly(attempt);
            LOG.warn("tcp feed: cannot connect to {}:{} ({}); again in {} s", host, port, e.toString(), retryMs / 1000);
            nextAttempt = System.currentTimeMillis() + retryMs;
            retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
            return false;
        }
    }

    private void lost(List<String> lines, long now) {
        String rest = splitter.end();
        if (rest != null) {
            lines.add(counts.received(rest, station, now));
        }
        counts.tooLong.addAndGet(splitter.takeTooLong());
        counts.disconnects.incrementAndGet();
        closeQuietly(socket);
        socket = null;
        nextAttempt = now + retryMs;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void wakeUp() {
        // poll waits at most its timeout (the socket's read timeout)
    }

    @Override
    public void close() {
        closed = true;
        if (socket != null) {
            counts.tooLong.addAndGet(splitter.takeTooLong());
            closeQuietly(socket);
        }
    }
}
