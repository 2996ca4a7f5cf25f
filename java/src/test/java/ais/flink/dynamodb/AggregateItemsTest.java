package ais.flink.dynamodb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/** An aggregate's line as the table's item, and the condition that only a newer firing wins. */
class AggregateItemsTest {
    static final String AGG = "{\"window\":\"sliding\",\"window_seconds\":900,\"slide_seconds\":60,\"precision\":6,"
            + "\"cell\":\"u4pruy\",\"window_start\":\"2022-11-10T02:00:00.000Z\",\"window_end\":\"2022-11-10T02:15:00.000Z\","
            + "\"reports\":3,\"vessels\":2,\"avg_sog\":10.2,\"sog_sum\":30.6,\"sog_reports\":3,\"vessel_hours\":0.25,"
            + "\"by_type\":{\"cargo\":{\"vessels\":1,\"reports\":2,\"vessel_hours\":0.2},"
            + "\"unknown\":{\"vessels\":1,\"reports\":1,\"vessel_hours\":0.05}},\"revision\":1}";

    @Test
    void theItemHasTheDesignsKeyAndFiguresAndTheWindowInItsSortKey() {
        Map<String, AttributeValue> item = AggregateItems.item(AGG);
        assertEquals("u4pruy", item.get("cell").s());
        assertEquals("sliding#900#60#6#1668045600", item.get("window_start").s());
        assertEquals("3", item.get("count").n());
        assertEquals("30.6", item.get("sog_sum").n());
        assertEquals("10.2", item.get("avg_sog").n());
        assertEquals("0.25", item.get("vessel_hours").n());
        assertEquals("1", item.get("revision").n());
        assertEquals("1668046500", item.get("window_end_epoch").n());
        assertEquals("2", item.get("by_type").m().get("cargo").m().get("reports").n());
    }

    @Test
    void theWindowKindIsReadWithoutParsingTheLineAndFromTheParsedLineOtherwise() {
        assertEquals("sliding", AggregateItems.windowKind(AGG));
        assertEquals("tumbling", AggregateItems.windowKind(AGG.replace("\"window\":\"sliding\"", "\"window\":\"tumbling\"")));
        assertEquals("tumbling", AggregateItems.windowKind("{\"cell\":\"u4\", \"window\" : \"tumbling\"}"));
    }

    @Test
    void noMeanWithoutASpeed() {
        Map<String, AttributeValue> item = AggregateItems.item(AGG.replace("\"avg_sog\":10.2", "\"avg_sog\":null"));
        assertFalse(item.containsKey("avg_sog"));
    }

    @Test
    void theWriteIsConditionalOnANewerFiring() {
        PutItemRequest put = AggregateItems.put("t", AggregateItems.item(AGG));
        assertTrue(put.conditionExpression().startsWith("attribute_not_exists(#cell) OR #count < :count"));
        assertEquals("count", put.expressionAttributeNames().get("#count"));
        assertEquals("3", put.expressionAttributeValues().get(":count").n());
        assertEquals("0.25", put.expressionAttributeValues().get(":hours").n());
        assertEquals("1", put.expressionAttributeValues().get(":revision").n());
    }

    @Test
    void aDeadLetterIsTheJobsDeadLetter() {
        String dead = DynamoDbWriter.deadLetter("{}", "ValidationException: too big");
        assertTrue(dead.startsWith("{\"id\":\""));
        assertTrue(dead.contains("\"reason\":\"dynamodb_rejected\""));
        assertTrue(dead.contains("\"raw\":\"{}\""));
    }
}
