package ais.flink.kinesis;

/** A Kinesis record as the fetcher hands it on: its lines, its sequence number, when it arrived. */
final class ShardRecord {
    final String[] lines;
    final String sequenceNumber;
    final long arrivedAt;

    ShardRecord(String[] lines, String sequenceNumber, long arrivedAt) {
        this.lines = lines;
        this.sequenceNumber = sequenceNumber;
        this.arrivedAt = arrivedAt;
    }
}
