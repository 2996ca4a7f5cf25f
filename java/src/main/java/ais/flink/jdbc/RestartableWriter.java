package ais.flink.jdbc;

import java.io.IOException;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC connector's writer, closed without an exception. When a batch cannot be written (the
 * database restarted, a connection lost for longer than the retries), the task fails and Flink
 * closes its operators; the connector's writer then tries the batch once more and throws from
 * {@code close()}, which Flink takes for an exception in the task's failure handler and answers by
 * killing the whole TaskManager (measured: a PostgreSQL restart mid-stream took the standalone
 * cluster's only TaskManager down). The rows of that batch are not lost: they came after the last
 * completed checkpoint (every batch is written before a checkpoint completes), so the restore
 * writes them again, and the statements make a repeat a no-op.
 */
final class RestartableWriter implements SinkWriter<String> {
    private static final Logger LOG = LoggerFactory.getLogger(RestartableWriter.class);

    private final SinkWriter<String> writer;
    private final String table;

    RestartableWriter(SinkWriter<String> writer, String table) {
        this.writer = writer;
        this.table = table;
    }

    @Override
    public void write(String element, Context context) throws IOException, InterruptedException {
        writer.write(element, context);
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        writer.flush(endOfInput);
    }

    @Override
    public void writeWatermark(Watermark watermark) throws IOException, InterruptedException {
        writer.writeWatermark(watermark);
    }

    @Override
    public void close() {
        try {
            writer.close();
        } catch (Exception e) {
            LOG.warn(
                    "PostgreSQL table {}: the writer closed with rows not written ({}); the restore"
                            + " from the last checkpoint writes them again",
                    table,
                    e.getMessage());
        }
    }
}
