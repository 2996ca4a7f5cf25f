package ais.flink.feeds;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttCallbackExtended;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code mqtt://HOST:PORT/TOPIC}: the messages of a topic filter, one or more lines each,
 * subscribed to with QoS 1 in a persistent session ({@code cleanSession=false}, client id
 * {@code clientId}): after a reconnect the broker sends again what it had sent but not seen
 * acknowledged (exact duplicates, which the job's dedup removes) and what arrived meanwhile. A
 * message is acknowledged once its lines are in the source's buffer; when the buffer is full the
 * client stops taking messages (back-pressure to the broker). It connects again after 1 s,
 * doubling to 30 s, whenever the broker is away or drops the session. The station is
 * {@code station}, else the message's topic.
 */
final class MqttFeed extends QueuedFeed {
    private static final Logger LOG = LoggerFactory.getLogger(MqttFeed.class);

    private final String uri;
    private final String topic;
    private final String station;
    private final MqttClient client;
    private final MqttConnectOptions options = new MqttConnectOptions();
    private long retryMs = TcpClientFeed.FIRST_RETRY_MS;
    private long nextAttempt;
    private boolean connectedOnce;

    MqttFeed(String host, int port, String topic, String station, String clientId, String username,
            String password, int bufferLines, FeedCounts counts) throws MqttException {
        super(bufferLines, counts);
        this.uri = "tcp://" + host + ":" + port;
        this.topic = topic;
        this.station = station;
        client = new MqttClient(uri, clientId, new MemoryPersistence());
        options.setCleanSession(false);
        options.setAutomaticReconnect(true);
        options.setMaxReconnectDelay((int) TcpClientFeed.LAST_RETRY_MS);
        options.setConnectionTimeout(5);
        options.setKeepAliveInterval(30);
        options.setMaxInflight(1000);
        if (!username.isEmpty()) {
            options.setUserName(username);
            options.setPassword(password.toCharArray());
        }
        client.setCallback(new Callback());
    }

    private final class Callback implements MqttCallbackExtended {
        @Override
        public void connectComplete(boolean reconnect, String serverUri) {
            counts.connections.incrementAndGet();
            try {
                client.subscribe(topic, 1);
                LOG.info("mqtt feed: {} {}, subscribed to {} (QoS 1)", reconnect ? "reconnected to" : "connected to",
                        serverUri, topic);
            } catch (MqttException e) {
                LOG.warn("mqtt feed: cannot subscribe to {} ({})", topic, e.toString());
            }
        }

        @Override
        public void connectionLost(Throwable cause) {
            counts.disconnects.incrementAndGet();
            LOG.warn("mqtt feed: the broker {} dropped the session ({}); connecting again", uri, String.valueOf(cause));
        }

        @Override
        public void messageArrived(String from, MqttMessage message) throws InterruptedException {
            long now = System.currentTimeMillis();
            byte[] payload = message.getPayload();
            LineSplitter splitter = new LineSplitter();
            List<String> lines = splitter.feed(payload, 0, payload.length);
            String rest = splitter.end();
            if (rest != null) {
                lines.add(rest);
            }
            counts.tooLong.addAndGet(splitter.takeTooLong());
            String who = station.isEmpty() ? from : station;
            for (String line : lines) {
                queue.put(counts.received(line, who, now)); // blocks while the buffer is full
            }
        }

        @Override
        public void deliveryComplete(IMqttDeliveryToken token) {}
    }

    @Override
    public List<String> poll(long timeoutMillis) throws InterruptedException {
        if (!connectedOnce) {
            connect(timeoutMillis);
        }
        return super.poll(connectedOnce ? timeoutMillis : 0);
    }

    /** The first connection; after it the client reconnects by itself. */
    private void connect(long timeoutMillis) throws InterruptedException {
        long now = System.currentTimeMillis();
        if (now < nextAttempt) {
            Thread.sleep(Math.max(0, Math.min(timeoutMillis, nextAttempt - now)));
            return;
        }
        try {
            client.connect(options);
            connectedOnce = true;
        } catch (MqttException e) {
            LOG.warn("mqtt feed: cannot connect to {} ({}); again in {} s", uri, e.toString(), retryMs / 1000);
            nextAttempt = System.currentTimeMillis() + retryMs;
            retryMs = Math.min(retryMs * 2, TcpClientFeed.LAST_RETRY_MS);
        }
    }

    @Override
    public void close() {
        try {
            if (client.isConnected()) {
                client.disconnect(1_000);
            }
            client.close(true);
        } catch (MqttException e) {
            LOG.warn("mqtt feed: closing: {}", e.toString());
        }
    }
}
