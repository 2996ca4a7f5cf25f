package ais.flink.feeds;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code udp://HOST:PORT}: datagrams of one or more lines. A thread of its own receives them as
 * fast as they come (UDP cannot be paused: a sender does not wait) into a buffer of
 * {@code bufferLines}; a line that does not fit is dropped and counted ({@code feed_dropped}).
 * The station is {@code station}, else the sender's IP address.
 */
final class UdpFeed extends QueuedFeed {
    private static final Logger LOG = LoggerFactory.getLogger(UdpFeed.class);
    static final int RECEIVE_BUFFER_BYTES = 8 << 20;

    private final DatagramSocket socket;
    private final Thread receiver;
    private final String station;
    private volatile boolean open = true;

    UdpFeed(String host, int port, String station, int bufferLines, FeedCounts counts) throws SocketException {
        super(bufferLines, counts);
        this.station = station;
        socket = new DatagramSocket(null);
        socket.setReuseAddress(true);
        socket.setReceiveBufferSize(RECEIVE_BUFFER_BYTES);
        socket.bind(new InetSocketAddress(host, port));
        counts.kernelDrops = this::kernelDrops;
        receiver = new Thread(this::receive, "udp feed " + host + ":" + port);
        receiver.setDaemon(true);
        receiver.start();
    }

    int localPort() {
        return socket.getLocalPort();
    }

    /**
     * Datagrams the kernel dropped because the socket's buffer was full (Linux: the {@code drops}
     * column of {@code /proc/net/udp} and {@code udp6} for this socket's port), or -1 where the
     * kernel does not say.
     */
    long kernelDrops() {
        String port = String.format(":%04X", socket.getLocalPort());
        long drops = -1;
        for (String table : new String[] {"/proc/net/udp", "/proc/net/udp6"}) {
            try {
                for (String row : Files.readAllLines(Paths.get(table))) {
                    String[] fields = row.trim().split("\\s+");
                    if (fields.length > 12 && fields[1].endsWith(port)) {
                        drops = Math.max(drops, 0) + Long.parseLong(fields[fields.length - 1]);
                    }
                }
            } catch (IOException | NumberFormatException e) {
                // not Linux, or not readable: unknown
            }
        }
        return drops;
    }

    private void receive() {
        byte[] buffer = new byte[65_536];
        DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
        while (open) {
            try {
                packet.setLength(buffer.length);
                socket.receive(packet);
            } catch (IOException e) {
                if (open) {
                    LOG.warn("udp feed: receive failed, going on", e);
                }
                continue;
            }
            long now = System.currentTimeMillis();
            String from = station.isEmpty() ? packet.getAddress().getHostAddress() : station;
            for (String line : lines(packet.getData(), packet.getLength())) {
                String tagged = counts.received(line, from, now);
                if (!queue.offer(tagged)) {
                    counts.dropped.incrementAndGet();
                }
            }
        }
    }

    private List<String> lines(byte[] data, int length) {
        LineSplitter splitter = new LineSplitter();
        List<String> lines = new ArrayList<>(splitter.feed(data, 0, length));
        String rest = splitter.end();
        if (rest != null) {
            lines.add(rest);
        }
        counts.tooLong.addAndGet(splitter.takeTooLong());
        return lines;
    }

    @Override
    public void close() {
        open = false;
        socket.close();
    }
}
