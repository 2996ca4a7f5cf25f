package ais.flink.kinesis;

import ais.flink.aws.AwsClients;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.DescribeStreamSummaryRequest;
import software.amazon.awssdk.services.kinesis.model.KinesisException;
import software.amazon.awssdk.services.kinesis.model.ResourceNotFoundException;
import software.amazon.awssdk.services.kinesis.model.StreamDescriptionSummary;

/** Before a job reads a stream: it is there and answers. Each failure: an exception of one line. */
public final class KinesisStreams {
    private KinesisStreams() {}

    /** The stream's open shards, or an {@link IllegalStateException} saying why it cannot be read. */
    public static int check(String region, String endpoint, String stream) {
        AwsClients clients = new AwsClients(region, endpoint);
        try (KinesisClient kinesis = clients.kinesis()) {
            StreamDescriptionSummary summary = kinesis.describeStreamSummary(
                    DescribeStreamSummaryRequest.builder().streamName(stream).build()).streamDescriptionSummary();
            return summary.openShardCount();
        } catch (ResourceNotFoundException e) {
            throw new IllegalStateException("stream " + stream + " does not exist in " + clients);
        } catch (KinesisException e) {
            String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
            throw new IllegalStateException("Kinesis in " + clients + ": " + code + ": "
                    + (e.awsErrorDetails() == null ? e.getMessage() : e.awsErrorDetails().errorMessage()));
        } catch (SdkClientException e) {
            String message = e.getMessage() == null ? "no answer" : e.getMessage().split("\n", 2)[0];
            throw new IllegalStateException("Kinesis in " + clients + ": " + message);
        }
    }
}
