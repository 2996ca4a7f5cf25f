package org.apache.parquet;

import java.util.HashMap;

import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.format.converter.ParquetMetadataConverter;

/**
 * Read options of parquet-java built without Hadoop, for {@code ais.flink.NoaaParquet}.
 * parquet-java's own builder always makes a Hadoop codec factory first, which cannot be loaded
 * without Hadoop on the classpath; its options' constructor, which this class (in its package)
 * calls, takes the codec factory as it is given. No filters, checksums or bloom filters: every
 * row of every row group is read.
 */
public final class PlainReadOptions {
    private PlainReadOptions() {}

    public static ParquetReadOptions of(CompressionCodecFactory codecs) {
        return new ParquetReadOptions(
                false, // signed string min/max
                false, // statistics filter
                false, // dictionary filter
                false, // record filter
                false, // column index filter
                false, // page checksums
                false, // bloom filter
                false, // off-heap decryption buffer
                false, // Hadoop vectored IO
                FilterCompat.NOOP,
                ParquetMetadataConverter.NO_FILTER,
                codecs,
                new HeapByteBufferAllocator(),
                8 << 20,
                new HashMap<>(),
                null, // decryption
                null, // metrics callback
                new PlainParquetConfiguration());
    }
}
