package ais.flink.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.kafka.shaded.org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.kafka.shaded.org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.flink.util.Collector;

/**
 * One input line per Kafka record value. Never throws: a record without a value (a tombstone)
 * is an empty line, which the job counts as skipped; bytes that are not UTF-8 decode with
 * replacement characters, which the job dead-letters as {@code not_text}. (Flink's
 * SimpleStringSchema fails the job on a tombstone.)
 */
public final class KafkaLines implements KafkaRecordDeserializationSchema<String> {
    private static final long serialVersionUID = 1L;

    /**
     * A source of the lines of one topic: read committed, starting at {@code startingOffsets}
     * ({@code earliest}, {@code latest}, {@code committed} (else earliest) or
     * {@code timestamp:<epoch ms>}), and, when {@code bounded}, stopping at the offsets that are
     * the latest when the job starts. {@code properties} are the user's client properties.
     */
    public static KafkaSource<String> source(
            String bootstrapServers, String topic, String groupId, String startingOffsets, boolean bounded,
            Properties properties) {
        KafkaSourceBuilder<String> builder = KafkaSource.<String>builder()
                .setBootstrapServers(bootstrapServers)
                .setTopics(topic)
                .setGroupId(groupId)
                .setStartingOffsets(offsets(startingOffsets))
                // Lines written by a transactional producer (another exactly-once job) count once committed.
                .setProperty("isolation.level", "read_committed")
                .setDeserializer(new KafkaLines());
        for (String key : properties.stringPropertyNames()) {
            builder.setProperty(key, properties.getProperty(key));
        }
        if (bounded) {
            builder.setBounded(OffsetsInitializer.latest());
        }
        return builder.build();
    }

    static OffsetsInitializer offsets(String spec) {
        switch (spec) {
            case "earliest":
                return OffsetsInitializer.earliest();
            case "latest":
                return OffsetsInitializer.latest();
            case "committed":
                return OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
            default:
                if (spec.startsWith("timestamp:")) {
                    return OffsetsInitializer.timestamp(Long.parseLong(spec.substring("timestamp:".length())));
                }
                throw new IllegalArgumentException("starting offsets: " + spec);
        }
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<String> out) {
        byte[] value = record.value();
        out.collect(value == null ? "" : new String(value, StandardCharsets.UTF_8));
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }
}
