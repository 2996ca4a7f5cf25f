package ais.flink.dynamodb;

import java.time.Instant;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/**
 * An aggregate's JSON line as an item of the windowed-aggregation table, and the conditional
 * write that stores it (the layout of the Lambda design this job replaces, with what the job
 * knows besides):
 *
 * <ul>
 *   <li>partition key {@code cell} (S); sort key {@code window_start} (S):
 *       {@code <window>#<size s>#<slide s>#<precision>#<start, epoch s>}, e.g.
 *       {@code tumbling#60#60#6#1668046440}, so tumbling and sliding windows, and runs with other
 *       windows, live side by side in one table;
 *   <li>{@code count} (the reports) and {@code sog_sum} (their SOG added up, knots), the design's
 *       figures, with {@code sog_reports}, {@code avg_sog} (absent when no report had a SOG),
 *       {@code vessels}, {@code vessel_hours}, {@code by_type} (a map per ship type category:
 *       vessels, reports, vessel_hours), {@code revision}, and the window's {@code window},
 *       {@code window_seconds}, {@code slide_seconds}, {@code precision},
 *       {@code window_start_epoch} and {@code window_end_epoch} (epoch s).
 * </ul>
 *
 * <p>The write replaces an item only with a newer firing of its window: a firing carries the
 * whole aggregate so far, so more reports is newer, then more vessel hours, then a higher
 * revision ({@code (count, vessel_hours, revision)} compared in that order, as the PostgreSQL
 * table compares them; the revision alone is not enough, since a restored job may number a
 * window's firings differently). The ADD of the design counted a redelivered batch twice; a
 * replay, a restart or a second run of this job leaves the table as it was.
 */
public final class AggregateItems {
    private static final ObjectMapper JSON = new ObjectMapper();

    static final String CONDITION = "attribute_not_exists(#cell) OR #count < :count"
            + " OR (#count = :count AND #hours < :hours)"
            + " OR (#count = :count AND #hours = :hours AND #revision < :revision)";

    private AggregateItems() {}

    /** The item of one aggregate JSON line. */
    public static Map<String, AttributeValue> item(String json) {
        JsonNode agg;
        try {
            agg = JSON.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException("not an aggregate: " + e.getMessage());
        }
        String window = agg.get("window").asText();
        long start = Instant.parse(agg.get("window_start").asText()).getEpochSecond();
        long end = Instant.parse(agg.get("window_end").asText()).getEpochSecond();
        Map<String, AttributeValue> item = new LinkedHashMap<>();
        item.put("cell", s(agg.get("cell").asText()));
        item.put("window_start", s(sortKey(window, agg.get("window_seconds").asLong(),
                agg.get("slide_seconds").asLong(), agg.get("precision").asInt(), start)));
        item.put("window", s(window));
        item.put("window_seconds", n(agg.get("window_seconds").asText()));
        item.put("slide_seconds", n(agg.get("slide_seconds").asText()));
        item.put("precision", n(agg.get("precision").asText()));
        item.put("window_start_epoch", n(Long.toString(start)));
        item.put("window_end_epoch", n(Long.toString(end)));
        item.put("count", n(agg.get("reports").asText()));
        item.put("sog_sum", n(number(agg, "sog_sum")));
        item.put("sog_reports", n(number(agg, "sog_reports")));
        JsonNode avg = agg.get("avg_sog");
        if (avg != null && !avg.isNull()) {
            item.put("avg_sog", n(avg.asText()));
        }
        item.put("vessels", n(agg.get("vessels").asText()));
        item.put("vessel_hours", n(agg.get("vessel_hours").asText()));
        Map<String, AttributeValue> byType = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = agg.get("by_type").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Map<String, AttributeValue> figures = new LinkedHashMap<>();
            figures.put("vessels", n(e.getValue().get("vessels").asText()));
            figures.put("reports", n(e.getValue().get("reports").asText()));
            figures.put("vessel_hours", n(e.getValue().get("vessel_hours").asText()));
            byType.put(e.getKey(), AttributeValue.builder().m(figures).build());
        }
        item.put("by_type", AttributeValue.builder().m(byType).build());
        item.put("revision", n(agg.get("revision").asText()));
        return item;
    }

    private static String number(JsonNode agg, String field) {
        JsonNode value = agg.get(field);
        return value == null || value.isNull() ? "0" : value.asText();
    }

    /**
     * An aggregate's window kind ({@code tumbling} or {@code sliding}): its {@code window} field,
     * read without parsing the whole line (the job writes the field as {@code "window":"<kind>"}),
     * else from the parsed line.
     */
    public static String windowKind(String json) {
        int at = json.indexOf(WINDOW_FIELD);
        if (at >= 0) {
            int from = at + WINDOW_FIELD.length();
            int to = json.indexOf('"', from);
            if (to > from) {
                return json.substring(from, to);
            }
        }
        try {
            return JSON.readTree(json).get("window").asText();
        } catch (Exception e) {
            throw new IllegalArgumentException("not an aggregate: " + e.getMessage());
        }
    }

    private static final String WINDOW_FIELD = "\"window\":\"";

    /** The sort key: window kind, size, slide, geohash precision and start (epoch s). */
    public static String sortKey(String window, long sizeSeconds, long slideSeconds, int precision, long startEpochS) {
        return window + "#" + sizeSeconds + "#" + slideSeconds + "#" + precision + "#" + startEpochS;
    }

    /** The conditional write of an item: stored unless the table holds this firing or a newer one. */
    public static PutItemRequest put(String table, Map<String, AttributeValue> item) {
        Map<String, String> names = new HashMap<>();
        names.put("#cell", "cell");
        names.put("#count", "count");
        names.put("#hours", "vessel_hours");
        names.put("#revision", "revision");
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":count", item.get("count"));
        values.put(":hours", item.get("vessel_hours"));
        values.put(":revision", item.get("revision"));
        return PutItemRequest.builder()
                .tableName(table)
                .item(item)
                .conditionExpression(CONDITION)
                .expressionAttributeNames(names)
                .expressionAttributeValues(values)
                .build();
    }

    private static AttributeValue s(String value) {
        return AttributeValue.builder().s(value).build();
    }

    private static AttributeValue n(String value) {
        return AttributeValue.builder().n(value).build();
    }
}
