package ais.flink.feeds;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code tcp-listen://HOST:PORT}: senders that connect here (AIS-catcher {@code -P}), any number
 * of them, read by the fetcher thread (back-pressure as for {@link TcpClientFeed}). A sender
 * that connects and says nothing costs a socket and nothing else; a line cut by a sender's close
 * is passed on as it is. The station is {@code station}, else the sender's IP address.
 */
final class TcpListenFeed implements Feed {
    private static final Logger LOG = LoggerFactory.getLogger(TcpListenFeed.class);

    private final Selector selector;
    private final ServerSocketChannel server;
    private final String station;
    private final FeedCounts counts;
    private final ByteBuffer buffer = ByteBuffer.allocate(65_536);

    /** One sender's connection. */
    private static final class Sender {
        final String station;
        final LineSplitter splitter = new LineSplitter();

        Sender(String station) {
            this.station = station;
        }
    }

    TcpListenFeed(String host, int port, String station, FeedCounts counts) throws IOException {
        this.station = station;
        this.counts = counts;
        selector = Selector.open();
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(host, port));
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
    }

    int localPort() throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    @Override
    public List<String> poll(long timeoutMillis) throws IOException {
        List<String> lines = new ArrayList<>();
        selector.select(Math.max(1, timeoutMillis));
        long now = System.currentTimeMillis();
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
            SelectionKey key = keys.next();
            keys.remove();
            if (!key.isValid()) {
                continue;
            }
            if (key.isAcceptable()) {
                accept();
            } else if (key.isReadable()) {
                read(key, lines, now);
            }
        }
        return lines;
    }

    private void accept() throws IOException {
        SocketChannel channel = server.accept();
        if (channel == null) {
            return;
        }
        channel.configureBlocking(false);
        String from = station;
        if (from.isEmpty()) {
            InetSocketAddress peer = (InetSocketAddress) channel.getRemoteAddress();
            from = peer == null ? "tcp" : peer.getAddress().getHostAddress();
        }
        channel.register(selector, SelectionKey.OP_READ, new Sender(from));
        counts.connections.incrementAndGet();
        LOG.info("tcp feed: a sender connected ({})", from);
    }

    private void read(SelectionKey key, List<String> lines, long now) {
        Sender sender = (Sender) key.attachment();
        SocketChannel channel = (SocketChannel) key.channel();
        int n;
        try {
            buffer.clear();
            n = channel.read(buffer);
        } catch (IOException e) {
            LOG.warn("tcp feed: a sender's connection broke ({})", e.toString());
            n = -1;
        }
        if (n < 0) {
            String rest = sender.splitter.end();
            if (rest != null) {
                lines.add(counts.received(rest, sender.station, now));
            }
            counts.tooLong.addAndGet(sender.splitter.takeTooLong());
            counts.disconnects.incrementAndGet();
            key.cancel();
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing
            }
            return;
        }
        for (String line : sender.splitter.feed(buffer.array(), 0, n)) {
            lines.add(counts.received(line, sender.station, now));
        }
        counts.tooLong.addAndGet(sender.splitter.takeTooLong());
    }

    @Override
    public void wakeUp() {
        selector.wakeup();
    }

    @Override
    public void close() throws IOException {
        for (SelectionKey key : selector.keys()) {
            if (key.attachment() instanceof Sender) {
                counts.tooLong.addAndGet(((Sender) key.attachment()).splitter.takeTooLong());
            }
            key.channel().close();
        }
        selector.close();
    }
}
