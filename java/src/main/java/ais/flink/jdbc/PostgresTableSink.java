package ais.flink.jdbc;

import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.jdbc.JdbcConnectionOptions;
import org.apache.flink.connector.jdbc.JdbcExecutionOptions;
import org.apache.flink.connector.jdbc.core.datastream.sink.JdbcSink;

/**
 * The sink of one output into one PostgreSQL table: Flink's JDBC connector, at least once (every
 * batch is written before a checkpoint completes, and again after a restore), with statements
 * that make a repeat a no-op, so the table ends up exactly as if each record came once. Its
 * writer is the connector's, closed by {@link RestartableWriter}.
 */
public final class PostgresTableSink implements Sink<String> {
    private static final long serialVersionUID = 1L;

    private final JdbcSink<String> jdbc;
    private final String table;

    private PostgresTableSink(JdbcSink<String> jdbc, String table) {
        this.jdbc = jdbc;
        this.table = table;
    }

    @Override
    public SinkWriter<String> createWriter(WriterInitContext context) throws IOException {
        return new RestartableWriter(jdbc.createWriter(context), table);
    }

    public static PostgresTableSink sink(
            String table,
            String url,
            String user,
            String password,
            String statement,
            String[] fields,
            int batchSize,
            long batchIntervalMs,
            int maxRetries) {
        JdbcConnectionOptions connection =
                new JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                        .withUrl(url)
                        .withDriverName("org.postgresql.Driver")
                        .withUsername(user)
                        .withPassword(password)
                        .withConnectionCheckTimeoutSeconds(10)
                        .build();
        JdbcExecutionOptions execution =
                JdbcExecutionOptions.builder()
                        .withBatchSize(batchSize)
                        .withBatchIntervalMs(batchIntervalMs)
                        .withMaxRetries(maxRetries)
                        .build();
        return new PostgresTableSink(
                JdbcSink.<String>builder()
                        .withQueryStatement(statement, new JsonRows(fields))
                        .withExecutionOptions(execution)
                        .buildAtLeastOnce(connection),
                table);
    }
}
