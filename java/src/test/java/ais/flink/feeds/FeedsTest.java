package ais.flink.feeds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The network inputs: the golden cases shared with the Python reference, and real sockets on loopback. */
class FeedsTest {
    static final String SENTENCE = "!AIVDM,1,1,,A,14`qQb0000o?u?DK>Smo2E`v0404,0*1A";
    static final String NORWEGIAN = "\\s:2573555,c:1707873398*05\\!BSVDM,1,1,,A,13m<EQ0P00PAd9JP;GI`0?wb0<0s,0*4C";

    static JsonNode golden() throws IOException {
        return new ObjectMapper().readTree(new File(System.getProperty("golden.dir", "../tests/golden"), "feeds.json"));
    }

    @Test
    void taggingFollowsTheGoldenCases() throws IOException {
        for (JsonNode c : golden().get("tag_cases")) {
            assertEquals(c.get("tagged").asText(),
                    Tagging.tag(c.get("line").asText(), c.get("station").asText(), c.get("received_ms").asLong()),
                    c.get("name").asText());
        }
    }

    @Test
    void splittingFollowsTheGoldenCases() throws IOException {
        for (JsonNode c : golden().get("split_cases")) {
            byte[] data = c.get("stream").asText().getBytes(StandardCharsets.UTF_8);
            int chunk = c.get("chunk").asInt();
            LineSplitter splitter = new LineSplitter();
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < data.length; i += chunk) {
                lines.addAll(splitter.feed(data, i, Math.min(chunk, data.length - i)));
            }
            List<String> expected = new ArrayList<>();
            c.get("lines").forEach(line -> expected.add(line.asText()));
            String name = c.get("name").asText();
            assertEquals(expected, lines, name);
            assertEquals(c.get("rest").isNull() ? null : c.get("rest").asText(), splitter.end(), name);
            assertEquals(c.get("too_long").asLong(), splitter.tooLong, name);
        }
    }

    /** Polls until {@code n} lines have come, or 10 s. */
    static List<String> take(Feed feed, int n) throws Exception {
        List<String> lines = new ArrayList<>();
        long until = System.currentTimeMillis() + 10_000;
        while (lines.size() < n && System.currentTimeMillis() < until) {
            lines.addAll(feed.poll(100));
        }
        return lines;
    }

    static String stamped(String line, String station) {
        return line.replaceFirst("^\\\\s:" + java.util.regex.Pattern.quote(station) + ",c:\\d{13},t:received\\*[0-9A-F]{2}\\\\", "<stamp>");
    }

    @Test
    void udpDatagramsOfSeveralLinesAreStampedWithTheSendersAddressAndAFullBufferCountsWhatItDrops() throws Exception {
        FeedCounts counts = new FeedCounts();
        try (UdpFeed feed = new UdpFeed("127.0.0.1", 0, "", 1_000, counts);
                DatagramSocket sender = new DatagramSocket()) {
            byte[] two = (SENTENCE + "\r\n" + NORWEGIAN + "\n").getBytes(StandardCharsets.UTF_8);
            sender.send(new DatagramPacket(two, two.length, InetAddress.getLoopbackAddress(), feed.localPort()));
            List<String> lines = take(feed, 2);
            assertEquals(List.of("<stamp>" + SENTENCE, NORWEGIAN), List.of(stamped(lines.get(0), "127.0.0.1"), lines.get(1)));
            assertEquals(2, counts.lines.get());
            assertEquals(1, counts.stamped.get());

            // nobody polls: 1,500 datagrams into a buffer of 1,000 lines
            byte[] one = SENTENCE.getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < 1_500; i++) {
                sender.send(new DatagramPacket(one, one.length, InetAddress.getLoopbackAddress(), feed.localPort()));
            }
            long until = System.currentTimeMillis() + 10_000;
            while (counts.lines.get() < 1_502 && System.currentTimeMillis() < until) {
                Thread.sleep(10);
            }
            List<String> held = take(feed, 1_500);
            assertEquals(1_502, counts.lines.get());
            assertEquals(1_500 - held.size(), counts.dropped.get());
            assertTrue(held.size() >= 1_000, "held " + held.size());
            assertEquals(0, feed.kernelDrops()); // the kernel's count of this socket (Linux), none here
        }
    }

    @Test
    void aTcpServerThatClosesMidLineIsReadToItsLastByteAndConnectedToAgain() throws Exception {
        FeedCounts counts = new FeedCounts();
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            TcpClientFeed feed = new TcpClientFeed("127.0.0.1", server.getLocalPort(), "norway", "", counts);
            Thread sender = new Thread(() -> {
                try {
                    for (int round = 0; round < 2; round++) {
                        try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
                            out.write((NORWEGIAN + "\r\n" + SENTENCE + "\r\n!AIVDM,1,1,,A,14`q").getBytes(StandardCharsets.UTF_8));
                        }
                    }
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            sender.start();
            List<String> lines = new ArrayList<>();
            long until = System.currentTimeMillis() + 15_000;
            while (lines.size() < 6 && System.currentTimeMillis() < until) {
                lines.addAll(feed.poll(100));
            }
            feed.close();
            List<String> shown = new ArrayList<>();
            lines.forEach(line -> shown.add(stamped(line, "norway")));
            List<String> once = List.of(NORWEGIAN, "<stamp>" + SENTENCE, "<stamp>!AIVDM,1,1,,A,14`q");
            List<String> twice = new ArrayList<>(once);
            twice.addAll(once);
            assertEquals(twice, shown);
            assertEquals(2, counts.connections.get());
        }
    }

    @Test
    void sendersThatConnectHereKeepTheirOwnStationsAndOrderAndOneThatSaysNothingCostsNothing() throws Exception {
        FeedCounts counts = new FeedCounts();
        try (TcpListenFeed feed = new TcpListenFeed("127.0.0.1", 0, "", counts);
                Socket silent = new Socket("127.0.0.1", feed.localPort());
                Socket talker = new Socket("127.0.0.1", feed.localPort())) {
            OutputStream out = talker.getOutputStream();
            for (int i = 0; i < 100; i++) {
                out.write(("line " + i + "\n").getBytes(StandardCharsets.UTF_8));
            }
            out.write(new byte[] {(byte) 0xff, (byte) 0xfe, '\n'});
            out.flush();
            List<String> lines = take(feed, 101);
            assertEquals(101, lines.size());
            for (int i = 0; i < 100; i++) {
                assertEquals("<stamp>line " + i, stamped(lines.get(i), "127.0.0.1"));
            }
            assertEquals("<stamp>\uFFFD\uFFFD", stamped(lines.get(100), "127.0.0.1"));
            assertEquals(2, counts.connections.get());
        }
    }
}
