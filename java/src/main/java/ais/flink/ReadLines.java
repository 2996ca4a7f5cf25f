package ais.flink;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Paths;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.Path;

/**
 * The lines the job's source gives for files ({@link ArchiveLines}), counted, with the peak heap
 * the reading took: {@code java -Xmx128m -cp <helper jar>:<PyFlink's lib/*> ais.flink.ReadLines
 * FILE...}. {@code bench/parquet_memory.py} runs it on a NOAA GeoParquet day of NOAA's size.
 */
public final class ReadLines {
    private ReadLines() {}

    public static void main(String[] args) throws Exception {
        long lines = 0;
        long chars = 0;
        long start = System.nanoTime();
        for (String arg : args) {
            java.nio.file.Path file = Paths.get(arg);
            long size = Files.size(file);
            FileSourceSplit split = new FileSourceSplit("0", new Path(file.toUri()), 0, size, 0, size);
            BulkFormat.Reader<String> reader = new ArchiveLines().createReader(new Configuration(), split);
            for (BulkFormat.RecordIterator<String> batch = reader.readBatch(); batch != null; batch = reader.readBatch()) {
                for (RecordAndPosition<String> r = batch.next(); r != null; r = batch.next()) {
                    lines++;
                    chars += r.getRecord().length();
                }
                batch.releaseBatch();
            }
            reader.close();
        }
        long peak = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        System.out.printf("%d lines, %d characters, %.1f s, peak heap %d MB, heap limit %d MB%n",
                lines, chars, (System.nanoTime() - start) / 1e9, peak >> 20, Runtime.getRuntime().maxMemory() >> 20);
    }
}
