package ais.flink;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import ais.flink.ArchiveDecoders.ArchiveFault;
import ais.flink.ArchiveDecoders.Ending;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipFile;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.ArrayResultIterator;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * The lines of one input file: a NOAA GeoParquet file's rows as CSV lines ({@link NoaaParquet});
 * any other file decompressed by its name: {@code .gz}/{@code .gzip},
 * {@code .bz2}, {@code .xz}, {@code .zst} and {@code .zip} (every member, in name order, as one
 * stream of lines; stored, deflated, bzip2 and LZMA members); any other name is read as it is.
 * Lines are split as Flink's text line format splits them ({@code \n}, {@code \r} or
 * {@code \r\n}), bytes that are not UTF-8 decode to one replacement character per maximal
 * invalid subpart.
 *
 * <p>Flink's own file source decompresses by extension too, but not {@code .zip}, and its
 * {@code .xz} and {@code .zst} readers need libraries the PyFlink package does not ship; a
 * corrupt or truncated archive fails the job there. Here it gives every line decompressed before
 * the fault ({@link ArchiveDecoders}), then ends the file with one {@link #CORRUPT} line (marker,
 * file, cause in the words of the plain loop's reader, {@code ais_pipeline.archives}), which the
 * job dead-letters as {@code corrupt_archive}; the files after it are still read. Files are not
 * split; a restored reader skips the lines it had emitted (the checkpointed record count).
 */
public final class ArchiveLines implements BulkFormat<String, FileSourceSplit> {
    private static final long serialVersionUID = 1L;

    /** Starts the line that stands for a corrupt archive: unit separator, "corrupt_archive". */
    public static final String CORRUPT = "\u001fcorrupt_archive\u001f";

    static final int BATCH = 1024;

    /** The names of the files decompressed by their name (any other is read as it is, or as Parquet). */
    static final String[] COMPRESSED = {".gz", ".gzip", ".bz2", ".xz", ".zst", ".zip"};

    @Override
    public Reader<String> createReader(Configuration config, FileSourceSplit split) throws IOException {
        return new LineReader(split.path(), 0);
    }

    @Override
    public Reader<String> restoreReader(Configuration config, FileSourceSplit split) throws IOException {
        long skip = split.getReaderPosition().map(CheckpointedPosition::getRecordsAfterOffset).orElse(0L);
        return new LineReader(split.path(), skip);
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }

    /** The decompressed members of a file, by its name: one, or a zip archive's in name order. */
    interface Members extends AutoCloseable {
        /** The next member's bytes, or null when there is none. */
        InputStream next() throws IOException;

        @Override
        void close() throws IOException;
    }

    static Members open(Path path) throws IOException {
        String name = path.getName().toLowerCase(Locale.ROOT);
        long length = path.getFileSystem().getFileStatus(path).getLen();
        if (length == 0) {
            return new Members() { // an empty file has no lines, whatever its name says
                @Override
                public InputStream next() {
                    return null;
                }

                @Override
                public void close() {}
            };
        }
        if (name.endsWith(".zip")) {
            return zipMembers(path, length);
        }
        Ending raw = new Ending(new BufferedInputStream(path.getFileSystem().open(path), 1 << 16));
        InputStream decompressed;
        try {
            if (name.endsWith(".gz") || name.endsWith(".gzip")) {
                decompressed = ArchiveDecoders.gzip(raw);
            } else if (name.endsWith(".bz2")) {
                decompressed = ArchiveDecoders.bzip2(raw);
            } else if (name.endsWith(".xz")) {
                decompressed = ArchiveDecoders.xz(raw);
            } else if (name.endsWith(".zst")) {
                decompressed = new ArchiveDecoders.Zstd(raw);
            } else {
                decompressed = raw;
            }
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
        return new Members() {
            private boolean given;

            @Override
            public InputStream next() {
                if (given) {
                    return null;
                }
                given = true;
                return decompressed;
            }

            @Override
            public void close() throws IOException {
                decompressed.close();
            }
        };
    }

    /** Zip compression methods that are read, and the names of some that are not. */
    static final Map<Integer, String> ZIP_OTHER = Map.of(
            1, "shrink", 6, "implode", 9, "deflate64", 10, "PKWARE implode", 93, "zstd", 95, "xz", 98, "PPMd");

    /**
     * A zip archive's members in name order (UTF-16 order), directories left out, from its central
     * directory on any file system (Flink's streams seek). Stored, deflated, bzip2 and LZMA members
     * are read; any other method, or encryption, is a fault naming the member when it is reached.
     */
    private static Members zipMembers(Path path, long length) throws IOException {
        FileSystem fs = path.getFileSystem();
        ZipFile zip;
        try {
            zip = ZipFile.builder()
                    .setSeekableByteChannel(new ArchiveDecoders.Channel(fs.open(path), length))
                    .setCharset(Charset.forName("IBM437")) // names without the UTF-8 flag, as Python reads them
                    .setUseUnicodeExtraFields(false)
                    .get();
        } catch (IOException | RuntimeException e) {
            throw new ArchiveFault("zip: not a zip archive");
        }
        List<ZipArchiveEntry> entries = new ArrayList<>();
        for (Enumeration<ZipArchiveEntry> e = zip.getEntries(); e.hasMoreElements(); ) {
            ZipArchiveEntry entry = e.nextElement();
            if (!entry.isDirectory()) {
                entries.add(entry);
            }
        }
        entries.sort(Comparator.comparing(ZipArchiveEntry::getName));
        return new Members() {
            private int next;

            @Override
            public InputStream next() throws IOException {
                if (next == entries.size()) {
                    return null;
                }
                ZipArchiveEntry entry = entries.get(next++);
                String member = "zip member " + entry.getName();
                if (entry.getGeneralPurposeBit().usesEncryption()) {
                    throw new ArchiveFault(member + ": encrypted");
                }
                int method = entry.getMethod();
                if (method != 0 && method != 8 && method != 12 && method != 14) {
                    String label = ZIP_OTHER.containsKey(method) ? " (" + ZIP_OTHER.get(method) + ")" : "";
                    throw new ArchiveFault(member + ": compression method " + method + label + " is not read");
                }
                Ending raw = new Ending(new BufferedInputStream(zip.getRawInputStream(entry), 1 << 16));
                InputStream decoded;
                try {
                    decoded = ArchiveDecoders.member(method, raw, entry.getSize());
                } catch (IOException | RuntimeException e) {
                    String what = e instanceof ArchiveFault ? e.getMessage() : raw.ended ? "truncated" : "corrupt data";
                    throw new ArchiveFault(member + ": " + what);
                }
                return new ArchiveDecoders.Member(decoded, raw, entry.getName(), entry.getSize(), entry.getCrc());
            }

            @Override
            public void close() throws IOException {
                zip.close();
            }
        };
    }

    /** A line's worth of the cause of a failed read. */
    static String cause(Throwable e) {
        if (e instanceof ArchiveFault) {
            return e.getMessage();
        }
        String message = e.getMessage();
        String text = e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
        return text.replace('\n', ' ').replace('\r', ' ').replace('\u001f', ' ');
    }

    /** Reads the lines of one file, a batch at a time. */
    static final class LineReader implements Reader<String> {
        private final Path path;
        private NoaaParquet parquet; // a NOAA GeoParquet file's rows as lines, else members' lines
        private Members members;
        private Lines lines;
        private long emitted;
        private boolean done;
        private String failure;

        LineReader(Path path, long skip) throws IOException {
            this.path = path;
            try {
                long length = path.getFileSystem().getFileStatus(path).getLen();
                if (NoaaParquet.isParquet(path, length)) {
                    parquet = new NoaaParquet(path, length);
                    emitted = parquet.skip(skip);
                } else {
                    members = open(path);
                    for (long i = 0; i < skip && nextLine() != null; i++) {
                        emitted++;
                    }
                }
            } catch (IOException | RuntimeException e) {
                failure = cause(e);
                if (parquet != null) {
                    emitted = parquet.given();
                }
                closeQuietly();
            }
            if (failure != null && skip > emitted) {
                failure = null; // the marker was emitted before the checkpoint
                done = true;
            }
        }

        /** The next line of the file, across its members; null at its end. */
        private String nextLine() throws IOException {
            if (parquet != null) {
                return parquet.next();
            }
            while (true) {
                if (lines == null) {
                    InputStream member = members.next();
                    if (member == null) {
                        return null;
                    }
                    lines = new Lines(member);
                }
                String line = lines.next();
                if (line != null) {
                    return line;
                }
                lines = null; // the member's stream closes with the archive
            }
        }

        @Override
        public RecordIterator<String> readBatch() {
            if (done) {
                return null;
            }
            long first = emitted;
            String[] batch = new String[BATCH];
            int n = 0;
            if (failure == null) {
                try {
                    String line;
                    while (n < BATCH && (line = nextLine()) != null) {
                        batch[n++] = line;
                    }
                    if (n < BATCH) {
                        done = true;
                    }
                } catch (IOException | RuntimeException e) {
                    failure = cause(e);
                }
            }
            if (failure != null && n < BATCH) {
                batch[n++] = CORRUPT + path.getName() + "\u001f" + failure;
                failure = null;
                done = true;
            }
            if (done) {
                closeQuietly();
            }
            if (n == 0) {
                return null;
            }
            emitted += n;
            ArrayResultIterator<String> iterator = new ArrayResultIterator<>();
            iterator.set(batch, n, CheckpointedPosition.NO_OFFSET, first);
            return iterator;
        }

        private void closeQuietly() {
            lines = null;
            if (parquet != null) {
                parquet.close();
                parquet = null;
            }
            if (members != null) {
                try {
                    members.close();
                } catch (IOException ignored) {
                    // nothing more is read from it
                }
                members = null;
            }
        }

        @Override
        public void close() {
            closeQuietly();
        }
    }

    /**
     * Lines of a byte stream, split as Flink's text line format splits them ({@code \n},
     * {@code \r} or {@code \r\n}) and decoded as UTF-8 with replacement characters
     * ({@link ArchiveDecoders#utf8}). Split on
     * the bytes as they come, so that every whole line before a read that fails (a truncated
     * archive) has been returned.
     */
    static final class Lines {
        private final InputStream in;
        private final byte[] chunk = new byte[1 << 16];
        private int at;
        private int end;
        private boolean afterCr;
        private byte[] line = new byte[256];
        private int length;
        private boolean ended;

        Lines(InputStream in) {
            this.in = in;
        }

        /** The next line, or null at the end of the stream. */
        String next() throws IOException {
            while (true) {
                if (at == end) {
                    if (ended) {
                        return null;
                    }
                    end = in.read(chunk, 0, chunk.length);
                    at = 0;
                    if (end <= 0) {
                        end = 0;
                        ended = true;
                        if (length > 0) { // a last line without a line break
                            return take();
                        }
                        return null;
                    }
                }
                byte b = chunk[at++];
                if (afterCr) {
                    afterCr = false;
                    if (b == '\n') {
                        continue;
                    }
                }
                if (b == '\n') {
                    return take();
                }
                if (b == '\r') {
                    afterCr = true;
                    return take();
                }
                if (length == line.length) {
                    line = Arrays.copyOf(line, line.length * 2);
                }
                line[length++] = b;
            }
        }

        private String take() {
            String text = ArchiveDecoders.utf8(line, 0, length);
            length = 0;
            return text;
        }
    }
}
