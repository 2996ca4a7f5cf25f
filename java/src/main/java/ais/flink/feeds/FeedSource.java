package ais.flink.feeds;

import java.util.Properties;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The lines of a live feed, as a source on Flink's Source API: {@code udp}, {@code tcp},
 * {@code tcp-listen} or {@code mqtt} (see {@link UdpFeed}, {@link TcpClientFeed},
 * {@link TcpListenFeed}, {@link MqttFeed}). Unbounded; one split, so the source runs at
 * parallelism 1. A line without a tag block gets one with its station and receive time
 * ({@link Tagging}). Nothing read is replayed after a restart (a network feed has no offsets):
 * for exactly-once, relay the feed into Kafka and read the topic.
 *
 * <p>{@code secrets} holds {@code username}, {@code password} (MQTT) and {@code login} (a line a
 * TCP server expects first); it is never logged ({@link #toString} names the feed alone).
 */
public final class FeedSource implements Source<String, FeedSplit, Boolean> {
    private static final long serialVersionUID = 1L;

    private final String scheme;
    private final String host;
    private final int port;
    private final String topic;
    private final String station;
    private final int bufferLines;
    private final Properties secrets;

    private FeedSource(String scheme, String host, int port, String topic, String station, int bufferLines,
            Properties secrets) {
        this.scheme = scheme;
        this.host = host;
        this.port = port;
        this.topic = topic;
        this.station = station;
        this.bufferLines = bufferLines;
        this.secrets = secrets;
    }

    /** The source of one feed; {@code topic} is for mqtt alone, {@code station} may be empty (the sender). */
    public static FeedSource source(String scheme, String host, int port, String topic, String station,
            int bufferLines, Properties secrets) {
        switch (scheme) {
            case "udp":
            case "tcp":
            case "tcp-listen":
            case "mqtt":
                break;
            default:
                throw new IllegalArgumentException("feed: no such scheme: " + scheme);
        }
        if (bufferLines < 1) {
            throw new IllegalArgumentException("feed: buffer of " + bufferLines + " lines");
        }
        return new FeedSource(scheme, host, port, topic, station, bufferLines, secrets);
    }

    Feed open(FeedCounts counts) throws Exception {
        String login = secrets.getProperty("login", "");
        switch (scheme) {
            case "udp":
                return new UdpFeed(host, port, station, bufferLines, counts);
            case "tcp":
                return new TcpClientFeed(host, port, station, login, counts);
            case "tcp-listen":
                return new TcpListenFeed(host, port, station, counts);
            default:
                String clientId = secrets.getProperty("client.id", "ais-pipeline-" + Integer.toHexString(
                        (host + ":" + port + "/" + topic).hashCode()));
                return new MqttFeed(host, port, topic, station, clientId, secrets.getProperty("username", ""),
                        secrets.getProperty("password", ""), bufferLines, counts);
        }
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SourceReader<String, FeedSplit> createReader(SourceReaderContext context) {
        FeedCounts counts = new FeedCounts();
        counts.register(context.metricGroup());
        return new FeedReader(() -> new FeedReader.Fetch(this, counts), context);
    }

    @Override
    public SplitEnumerator<FeedSplit, Boolean> createEnumerator(SplitEnumeratorContext<FeedSplit> context) {
        return new FeedEnumerator(context, false);
    }

    @Override
    public SplitEnumerator<FeedSplit, Boolean> restoreEnumerator(SplitEnumeratorContext<FeedSplit> context,
            Boolean assigned) {
        return new FeedEnumerator(context, assigned);
    }

    @Override
    public SimpleVersionedSerializer<FeedSplit> getSplitSerializer() {
        return new FeedSplit.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<Boolean> getEnumeratorCheckpointSerializer() {
        return new FeedSplit.StateSerializer();
    }

    @Override
    public String toString() {
        return scheme + "://" + host + ":" + port + (topic.isEmpty() ? "" : "/" + topic);
    }
}
