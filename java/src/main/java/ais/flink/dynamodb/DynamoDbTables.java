package ais.flink.dynamodb;

import ais.flink.aws.AwsClients;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;

/**
 * Before a job writes the aggregates: the table is there with the key the job writes (partition
 * key {@code cell}, sort key {@code window_start}, both strings), or is made on demand capacity
 * when asked to. Each failure is an {@link IllegalStateException} of one line.
 */
public final class DynamoDbTables {
    private DynamoDbTables() {}

    /** The key the job writes, as {@code name (type)} pairs: what a message shows. */
    public static final String KEY = "cell (S, partition key), window_start (S, sort key)";

    /** Check (and, with {@code create}, make) {@code table}; returns "created" or "found". */
    public static String prepare(String region, String endpoint, String table, boolean create) {
        AwsClients clients = new AwsClients(region, endpoint);
        try (DynamoDbClient dynamo = clients.dynamoDb(2)) {
            TableDescription found;
            try {
                found = dynamo.describeTable(DescribeTableRequest.builder().tableName(table).build()).table();
            } catch (ResourceNotFoundException e) {
                if (!create) {
                    throw new IllegalStateException("table " + table + " does not exist in " + clients
                            + " (--dynamodb-create makes it)");
                }
                dynamo.createTable(CreateTableRequest.builder()
                        .tableName(table)
                        .billingMode(BillingMode.PAY_PER_REQUEST)
                        .attributeDefinitions(
                                AttributeDefinition.builder().attributeName("cell")
                                        .attributeType(ScalarAttributeType.S).build(),
                                AttributeDefinition.builder().attributeName("window_start")
                                        .attributeType(ScalarAttributeType.S).build())
                        .keySchema(
                                KeySchemaElement.builder().attributeName("cell").keyType(KeyType.HASH).build(),
                                KeySchemaElement.builder().attributeName("window_start").keyType(KeyType.RANGE).build())
                        .build());
                dynamo.waiter().waitUntilTableExists(DescribeTableRequest.builder().tableName(table).build());
                return "created";
            }
            String key = keyOf(found);
            if (!KEY.equals(key)) {
                throw new IllegalStateException("table " + table + " has the key " + key + "; the job writes " + KEY
                        + " (a table of the job's own, or --dynamodb-create with a new name)");
            }
            if (found.tableStatus() != TableStatus.ACTIVE && found.tableStatus() != TableStatus.UPDATING) {
                dynamo.waiter().waitUntilTableExists(DescribeTableRequest.builder().tableName(table).build());
            }
            return "found";
        } catch (DynamoDbException e) {
            String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
            throw new IllegalStateException("DynamoDB in " + clients + ": " + code + ": "
                    + (e.awsErrorDetails() == null ? e.getMessage() : e.awsErrorDetails().errorMessage()));
        } catch (SdkClientException e) {
            throw new IllegalStateException("DynamoDB in " + clients + ": " + firstLine(e.getMessage()));
        }
    }

    static String keyOf(TableDescription table) {
        Map<String, String> types = new HashMap<>();
        table.attributeDefinitions().forEach(a -> types.put(a.attributeName(), a.attributeTypeAsString()));
        StringBuilder sb = new StringBuilder();
        for (KeySchemaElement element : table.keySchema()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(element.attributeName()).append(" (").append(types.get(element.attributeName())).append(", ")
                    .append(element.keyType() == KeyType.HASH ? "partition key" : "sort key").append(')');
        }
        return sb.toString();
    }

    static String firstLine(String message) {
        if (message == null) {
            return "no answer";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
