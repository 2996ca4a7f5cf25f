package ais.flink.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.kafka.shaded.org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A JSON line to a Kafka record of one topic: the line is the value, and the key is the values
 * of some of its fields joined by {@code |} (none: no key). Keys make a compacted topic or an
 * upsert reader keep the right record: aggregates by window kind, cell and window start (the
 * highest revision is written last), positions by MMSI.
 *
 * <p>The record timestamp is left to the producer (the time of writing), not set to the event
 * time: a topic's retention counts from record timestamps, and output of a replayed capture
 * from 2022 stamped with its event time was deleted by the broker minutes after it was written
 * (the fault-injection tests lost their first records that way). Event time is in the JSON.
 */
public final class KeyedJsonRecords implements KafkaRecordSerializationSchema<String> {
    private static final long serialVersionUID = 1L;

    private final String topic;
    private final String[] keyFields;
    private transient ObjectMapper mapper;

    /**
     * A sink of JSON lines into {@code topic}, keyed by {@code keyFields}: transactional
     * (committed on checkpoints, ids {@code transactionalIdPrefix}-...) when {@code exactlyOnce},
     * else flushed on checkpoints (at least once). {@code properties} are the user's client
     * properties.
     */
    public static KafkaSink<String> sink(
            String bootstrapServers, String topic, String[] keyFields, boolean exactlyOnce,
            String transactionalIdPrefix, long transactionTimeoutMs, Properties properties) {
        KafkaSinkBuilder<String> builder = KafkaSink.<String>builder()
                .setBootstrapServers(bootstrapServers)
                .setRecordSerializer(new KeyedJsonRecords(topic, keyFields));
        if (exactlyOnce) {
            builder.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                    .setTransactionalIdPrefix(transactionalIdPrefix)
                    .setProperty("transaction.timeout.ms", Long.toString(transactionTimeoutMs));
        } else {
            builder.setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE);
        }
        for (String key : properties.stringPropertyNames()) {
            builder.setProperty(key, properties.getProperty(key));
        }
        return builder.build();
    }

    public KeyedJsonRecords(String topic, String[] keyFields) {
        this.topic = topic;
        this.keyFields = keyFields;
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(String element, KafkaSinkContext context, Long timestamp) {
        byte[] key = null;
        if (keyFields.length > 0) {
            key = key(element).getBytes(StandardCharsets.UTF_8);
        }
        return new ProducerRecord<>(topic, null, null, key, element.getBytes(StandardCharsets.UTF_8));
    }

    String key(String json) {
        if (mapper == null) {
            mapper = new ObjectMapper();
        }
        StringBuilder sb = new StringBuilder();
        try {
            JsonNode node = mapper.readTree(json);
            for (int i = 0; i < keyFields.length; i++) {
                if (i > 0) {
                    sb.append('|');
                }
                JsonNode value = node.get(keyFields[i]);
                if (value != null && !value.isNull()) {
                    sb.append(value.asText());
                }
            }
        } catch (Exception e) {
            // The job writes only JSON it made itself; keep the record, without a key.
            return "";
        }
        return sb.toString();
    }
}
