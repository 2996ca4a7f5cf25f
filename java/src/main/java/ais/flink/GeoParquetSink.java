package ais.flink;

import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.functions.sink.filesystem.OutputFileConfig;
import org.apache.flink.streaming.api.functions.sink.filesystem.PartFileInfo;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.BasePathBucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.CheckpointRollingPolicy;

/**
 * One output as GeoParquet part files ({@link GeoParquetRecords}) straight under a directory,
 * committed exactly once with the checkpoints (and at the end of a bounded input) as the JSON
 * Lines files are: a part file in progress is a hidden file until its checkpoint completes. A
 * part also rolls when it reaches {@code maxBytes} or is {@code maxMillis} old, so that a long run
 * writes files of a size that readers open well.
 */
public final class GeoParquetSink {
    private GeoParquetSink() {}

    public static FileSink<String> of(
            String directory, String[] names, String[] types, String[] fields, String geometry, long maxBytes, long maxMillis) {
        return FileSink.forBulkFormat(new Path(directory), new GeoParquetRecords(names, types, fields, geometry))
                .withBucketAssigner(new BasePathBucketAssigner<>())
                .withRollingPolicy(new Rolling(maxBytes, maxMillis))
                .withOutputFileConfig(OutputFileConfig.builder().withPartSuffix(".parquet").build())
                .build();
    }

    /** Rolls on every checkpoint, and on size and age. */
    static final class Rolling extends CheckpointRollingPolicy<String, String> {
        private static final long serialVersionUID = 1L;
        private final long maxBytes;
        private final long maxMillis;

        Rolling(long maxBytes, long maxMillis) {
            this.maxBytes = maxBytes;
            this.maxMillis = maxMillis;
        }

        @Override
        public boolean shouldRollOnEvent(PartFileInfo<String> part, String element) throws java.io.IOException {
            return part.getSize() >= maxBytes;
        }

        @Override
        public boolean shouldRollOnProcessingTime(PartFileInfo<String> part, long now) {
            return now - part.getCreationTime() >= maxMillis;
        }
    }
}
