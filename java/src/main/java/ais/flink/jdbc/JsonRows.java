package ais.flink.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.apache.flink.connector.jdbc.JdbcStatementBuilder;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One output record (a JSON line the job wrote) as the parameters of one table's statement: the
 * values of the named fields, in order, as text (the statement casts each placeholder to its
 * column's type, {@code ?::bigint}), SQL NULL for a null or missing field, and for the field
 * name {@link #REST} the object of every field not named, as JSON (a static report's decoded
 * fields, for a {@code jsonb} column). Numbers keep the text the job wrote them in. PostgreSQL's
 * text and jsonb cannot hold the character NUL (a dead letter's raw line may): it is stored as
 * U+FFFD, the replacement character.
 *
 * <p>The statements and the field lists are made in Python ({@code ais_pipeline/postgres.py}),
 * with the tables they write to.
 */
public final class JsonRows implements JdbcStatementBuilder<String> {
    private static final long serialVersionUID = 1L;

    /** The field name that stands for "every field not named". */
    public static final String REST = "*";

    private final String[] fields;
    private transient ObjectMapper mapper;
    private transient Set<String> named;

    public JsonRows(String[] fields) {
        this.fields = fields.clone();
    }

    @Override
    public void accept(PreparedStatement statement, String record) throws SQLException {
        if (statement == null) {
            // The connector lost its connection and could not open a new one yet: an SQL error,
            // so that it retries (reconnecting) instead of failing at once.
            throw new SQLException("no connection to the database");
        }
        String[] values = values(record);
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                statement.setNull(i + 1, Types.VARCHAR);
            } else {
                statement.setString(i + 1, values[i]);
            }
        }
    }

    /** The statement's parameters for one record, null for SQL NULL. */
    public String[] values(String record) throws SQLException {
        if (mapper == null) {
            // Decimals exactly as written (0.0 stays 0.0, not 0): the jsonb holds the record's text.
            mapper = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
            mapper.setNodeFactory(JsonNodeFactory.withExactBigDecimals(true));
            named = new HashSet<>(Arrays.asList(fields));
        }
        JsonNode node;
        try {
            node = mapper.readTree(record);
        } catch (Exception e) {
            throw new SQLException("not a JSON record: " + e.getMessage());
        }
        String[] values = new String[fields.length];
        for (int i = 0; i < fields.length; i++) {
            if (REST.equals(fields[i])) {
                ObjectNode rest = mapper.createObjectNode();
                Iterator<Map.Entry<String, JsonNode>> it = node.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    if (!named.contains(e.getKey())) {
                        rest.set(e.getKey(), e.getValue());
                    }
                }
                values[i] = withoutNul(rest.toString());
                continue;
            }
            JsonNode value = node.get(fields[i]);
            if (value == null || value.isNull()) {
                values[i] = null;
            } else if (value.isBigDecimal()) {
                values[i] = value.decimalValue().toString();
            } else if (value.isValueNode()) {
                values[i] = withoutNul(value.asText());
            } else {
                values[i] = withoutNul(value.toString());
            }
        }
        return values;
    }

    private static String withoutNul(String text) {
        return text.indexOf('\u0000') < 0 ? text : text.replace("\u0000", "\uFFFD");
    }
}
