package ais.flink.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
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
