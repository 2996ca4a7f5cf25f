package ais.flink;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.GZIPInputStream;

import org.apache.flink.shaded.io.airlift.compress.Decompressor;
import org.apache.flink.shaded.io.airlift.compress.snappy.SnappyCompressor;
import org.apache.flink.shaded.io.airlift.compress.snappy.SnappyDecompressor;
import org.apache.flink.shaded.io.airlift.compress.zstd.ZstdDecompressor;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Parquet's page codecs without Hadoop: snappy and zstd from the aircompressor that Flink ships
 * (shaded in its distribution), gzip from the JDK, uncompressed pages as they are. Any other codec
 * (LZ4, LZO, Brotli) is a fault naming it, which ends the file with its marker line. Pages are
 * written with snappy.
 */
final class ParquetCodecs implements CompressionCodecFactory {
    /** The largest page read (writers make pages of about 1 MB). */
    static final int MAX_PAGE_BYTES = 256 << 20;

    /** Pages are written with snappy, as GeoParquet files commonly are (NOAA's too). */
    @Override
    public BytesInputCompressor getCompressor(CompressionCodecName codecName) {
        if (codecName != CompressionCodecName.SNAPPY) {
            throw new NotRead("parquet: pages are written with SNAPPY only, not " + codecName);
        }
        SnappyCompressor snappy = new SnappyCompressor();
        return new BytesInputCompressor() {
            @Override
            public BytesInput compress(BytesInput bytes) throws IOException {
                byte[] in = bytes.toByteArray();
                byte[] out = new byte[snappy.maxCompressedLength(in.length)];
                int n = snappy.compress(in, 0, in.length, out, 0, out.length);
                return BytesInput.from(out, 0, n);
            }

            @Override
            public CompressionCodecName getCodecName() {
                return CompressionCodecName.SNAPPY;
            }

            @Override
            public void release() {}
        };
    }

    @Override
    public BytesInputDecompressor getDecompressor(CompressionCodecName codecName) {
        switch (codecName) {
            case UNCOMPRESSED:
                return new Pages(null, codecName);
            case SNAPPY:
                return new Pages(new SnappyDecompressor(), codecName);
            case ZSTD:
                return new Pages(new ZstdDecompressor(), codecName);
            case GZIP:
                return new Pages(null, codecName);
            default:
                // named as pyarrow names them: LZ4 for both of Parquet's LZ4 codecs
                String name = codecName == CompressionCodecName.LZ4_RAW ? "LZ4" : codecName.name();
                throw new NotRead("parquet: pages compressed with " + name + " are not read");
        }
    }

    @Override
    public void release() {}

    /** A codec that is not read here: the file ends with a marker line in these words. */
    static final class NotRead extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotRead(String message) {
            super(message);
        }
    }

    /** One codec's pages. */
    static final class Pages implements BytesInputDecompressor {
        private final Decompressor codec; // null: uncompressed or gzip
        private final CompressionCodecName name;

        Pages(Decompressor codec, CompressionCodecName name) {
            this.codec = codec;
            this.name = name;
        }

        byte[] decompress(byte[] in, int offset, int length, int size) throws IOException {
            if (name == CompressionCodecName.UNCOMPRESSED) {
                byte[] out = new byte[length];
                System.arraycopy(in, offset, out, 0, length);
                return out;
            }
            if (size < 0 || size > MAX_PAGE_BYTES) { // a damaged header must not take the heap
                throw new IOException("a page of " + size + " bytes");
            }
            byte[] out = new byte[size];
            if (name == CompressionCodecName.GZIP) {
                try (GZIPInputStream gz = new GZIPInputStream(new ByteArrayInputStream(in, offset, length))) {
                    int n = gz.readNBytes(out, 0, size);
                    if (n != size) {
                        throw new IOException("gzip page of " + n + " bytes, " + size + " expected");
                    }
                }
                return out;
            }
            int n = codec.decompress(in, offset, length, out, 0, size);
            if (n != size) {
                throw new IOException(name + " page of " + n + " bytes, " + size + " expected");
            }
            return out;
        }

        @Override
        public BytesInput decompress(BytesInput bytes, int decompressedSize) throws IOException {
            byte[] in = bytes.toByteArray();
            return BytesInput.from(decompress(in, 0, in.length, decompressedSize));
        }

        @Override
        public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int decompressedSize)
                throws IOException {
            byte[] in = new byte[compressedSize];
            input.get(in);
            output.put(decompress(in, 0, compressedSize, decompressedSize));
        }

        @Override
        public void release() {}
    }
}
