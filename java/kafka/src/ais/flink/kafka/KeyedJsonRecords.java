package ais.flink.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.kafka.shaded.org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A JSON line to a Kafka record of one topic: the line is the value, and the key is the values
 * of some of its fields joined by {@code |} (none: no key). Keys make a compacted topic or an
 * upsert reader keep the right record: aggregates by window kind, cell and window start (the
 * highest revision is written last), positions by MMSI. The record timestamp is the event time
 * when the record has one.
 */
public final class KeyedJsonRecords implements KafkaRecordSerializationSchema<String> {
    private static final long serialVersionUID = 1L;

    private final String topic;
    private final String[] keyFields;
    private transient ObjectMapper mapper;

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
        Long ts = timestamp == null || timestamp < 0 ? null : timestamp;
        return new ProducerRecord<>(topic, null, ts, key, element.getBytes(StandardCharsets.UTF_8));
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
