package ais.flink.aws;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.retry.RetryMode;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.KinesisClientBuilder;

/**
 * Where the job's AWS clients go: a region, and optionally an endpoint of its own (a private
 * endpoint, or a local server such as moto in the tests). Credentials always come from the AWS
 * SDK's default chain (environment, system properties, the shared credentials and config files,
 * web identity, the container or instance role): the job never takes them as arguments, and
 * never holds or logs them. The clients are synchronous over the SDK's small URLConnection HTTP
 * client: the source calls them from its fetcher thread, the sink from its request threads.
 */
public final class AwsClients implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String region;
    private final String endpoint;

    public AwsClients(String region, String endpoint) {
        if (region == null || region.isEmpty()) {
            throw new IllegalArgumentException("AWS: a region is needed");
        }
        this.region = region;
        this.endpoint = endpoint == null ? "" : endpoint;
    }

    public String region() {
        return region;
    }

    public String endpoint() {
        return endpoint;
    }

    /** A Kinesis client that does not retry by itself: the source backs off on its own terms. */
    public KinesisClient kinesis() {
        if (!endpoint.isEmpty()) {
            // A server of one's own (moto, a local emulator) speaks JSON, not the CBOR the SDK
            // uses with Kinesis by default; AWS itself takes either. Read when a client is built.
            System.setProperty("aws.cborEnabled", "false");
        }
        KinesisClientBuilder builder = KinesisClient.builder()
                .region(Region.of(region))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .httpClientBuilder(http())
                .overrideConfiguration(ClientOverrideConfiguration.builder()
                        .retryStrategy(RetryMode.STANDARD)
                        .retryStrategy(b -> b.maxAttempts(1))
                        .apiCallAttemptTimeout(Duration.ofSeconds(30))
                        .build());
        if (!endpoint.isEmpty()) {
            builder.endpointOverride(URI.create(endpoint));
        }
        return builder.build();
    }

    /**
     * A DynamoDB client; {@code attempts} is how often the SDK sends one request (its standard
     * retry mode backs off on throttling between them).
     */
    public DynamoDbClient dynamoDb(int attempts) {
        DynamoDbClientBuilder builder = DynamoDbClient.builder()
                .region(Region.of(region))
                .credentialsProvider(DefaultCredentialsProvider.builder().build())
                .httpClientBuilder(http())
                .overrideConfiguration(ClientOverrideConfiguration.builder()
                        .retryStrategy(RetryMode.STANDARD)
                        .retryStrategy(b -> b.maxAttempts(Math.max(1, attempts)))
                        .apiCallAttemptTimeout(Duration.ofSeconds(30))
                        .build());
        if (!endpoint.isEmpty()) {
            builder.endpointOverride(URI.create(endpoint));
        }
        return builder.build();
    }

    private static UrlConnectionHttpClient.Builder http() {
        return UrlConnectionHttpClient.builder()
                .connectionTimeout(Duration.ofSeconds(10))
                .socketTimeout(Duration.ofSeconds(30));
    }

    @Override
    public String toString() {
        return "AWS " + region + (endpoint.isEmpty() ? "" : " at " + endpoint);
    }
}
