package ais.flink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import javax.annotation.Nullable;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.assigners.FileSplitAssigner;
import org.apache.flink.core.fs.Path;

/**
 * The lines of a file, or of every file under a directory, read in name order: a directory run
 * is the concatenation of its files sorted by path (segment by segment, as Python sorts
 * {@code pathlib} paths; {@code ais_pipeline.files.input_files} lists them the same way). Read
 * by one subtask, so the job sees one lane in one order, and a directory of daily files is a
 * replay of the days in order. With {@code monitorMillis > 0} the directory is watched for new
 * files, which are read in name order among themselves as they are found. Compressed files are
 * read decompressed ({@link ArchiveLines}).
 */
public final class OrderedFiles {
    private OrderedFiles() {}

    public static FileSource<String> source(String path, long monitorMillis) {
        FileSource.FileSourceBuilder<String> builder =
                FileSource.forBulkFileFormat(new ArchiveLines(), new Path(path)).setSplitAssigner(InNameOrder::new);
        if (monitorMillis > 0) {
            builder.monitorContinuously(Duration.ofMillis(monitorMillis));
        }
        return builder.build();
    }

    /** The lines of the files {@code paths}, read one after another in name order, by one subtask. */
    public static FileSource<String> files(String[] paths) {
        Path[] all = new Path[paths.length];
        for (int i = 0; i < paths.length; i++) {
            all[i] = new Path(paths[i]);
        }
        return FileSource.forBulkFileFormat(new ArchiveLines(), all).setSplitAssigner(InNameOrder::new).build();
    }

    /**
     * The watermarks of parallel file lanes ({@code --lanes per-file}): each reader (a lane, one
     * file at a time, the next in name order when it is done) paced by the event time it has read
     * ({@link LaneClock}), at most {@code maxDriftMillis} ahead of the slowest lane.
     */
    public static WatermarkStrategy<String> alignedLanes(
            long outOfOrderness, long idleTimeout, long maxClockSkew, int consensusLines, int warmUpLines,
            int jumpLines, long maxDriftMillis, long updateMillis) {
        return LaneClock.aligned(
                outOfOrderness, idleTimeout, maxClockSkew, consensusLines, warmUpLines, jumpLines, maxDriftMillis,
                updateMillis);
    }

    static final Comparator<FileSourceSplit> BY_PATH =
            Comparator.comparing((FileSourceSplit s) -> s.path().toUri().getPath(), OrderedFiles::compareSegments)
                    .thenComparingLong(FileSourceSplit::offset);

    static int compareSegments(String a, String b) {
        String[] x = a.split("/");
        String[] y = b.split("/");
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            int c = x[i].compareTo(y[i]);
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(x.length, y.length);
    }

    /** Hands out splits by path, whatever host asks. */
    static final class InNameOrder implements FileSplitAssigner {
        private final List<FileSourceSplit> splits;

        InNameOrder(Collection<FileSourceSplit> initial) {
            splits = new ArrayList<>(initial);
            splits.sort(BY_PATH);
        }

        @Override
        public Optional<FileSourceSplit> getNext(@Nullable String hostname) {
            return splits.isEmpty() ? Optional.empty() : Optional.of(splits.remove(0));
        }

        @Override
        public void addSplits(Collection<FileSourceSplit> more) {
            splits.addAll(more);
            splits.sort(BY_PATH);
        }

        @Override
        public Collection<FileSourceSplit> remainingSplits() {
            return new ArrayList<>(splits);
        }
    }
}
