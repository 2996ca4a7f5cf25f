package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.apache.commons.compress.compressors.bzip2.BZip2CompressorOutputStream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.io.airlift.compress.zstd.ZstdOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.XZOutputStream;

/** Every compression the job reads gives the plain file's lines; a broken archive ends in one marker line. */
class ArchiveLinesTest {
    static final String TEXT = "!AIVDM,1,1,,A,first,0*00\r\n\\c:1*00\\!AIVDM,second\n\nlast without newline";
    static final List<String> LINES =
            List.of("!AIVDM,1,1,,A,first,0*00", "\\c:1*00\\!AIVDM,second", "", "last without newline");

    @TempDir java.nio.file.Path dir;

    interface Compressor {
        OutputStream wrap(OutputStream out) throws IOException;
    }

    java.nio.file.Path write(String name, Compressor compressor, String text) throws IOException {
        java.nio.file.Path file = dir.resolve(name);
        try (OutputStream out = compressor.wrap(Files.newOutputStream(file))) {
            out.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return file;
    }

    static List<String> read(java.nio.file.Path file, long skip) throws IOException {
        FileSourceSplit split = new FileSourceSplit("0", new Path(file.toUri()), 0, Files.size(file), 0, Files.size(file));
        ArchiveLines format = new ArchiveLines();
        BulkFormat.Reader<String> reader = skip == 0
                ? format.createReader(new Configuration(), split)
                : format.restoreReader(
                        new Configuration(),
                        split.updateWithCheckpointedPosition(new CheckpointedPosition(CheckpointedPosition.NO_OFFSET, skip)));
        List<String> lines = new ArrayList<>();
        for (BulkFormat.RecordIterator<String> batch = reader.readBatch(); batch != null; batch = reader.readBatch()) {
            for (RecordAndPosition<String> r = batch.next(); r != null; r = batch.next()) {
                lines.add(r.getRecord());
            }
            batch.releaseBatch();
        }
        reader.close();
        return lines;
    }

    @Test
    void everyCompressionGivesThePlainLines() throws IOException {
        assertEquals(LINES, read(write("plain.nmea", out -> out, TEXT), 0));
        assertEquals(LINES, read(write("a.nmea.gz", GZIPOutputStream::new, TEXT), 0));
        assertEquals(LINES, read(write("a.nmea.bz2", BZip2CompressorOutputStream::new, TEXT), 0));
        assertEquals(LINES, read(write("a.nmea.xz", out -> new XZOutputStream(out, new LZMA2Options()), TEXT), 0));
        assertEquals(LINES, read(write("a.csv.zst", ZstdOutputStream::new, TEXT), 0));
    }

    @Test
    void anEmptyFileHasNoLinesWhateverItsName() throws IOException {
        for (String name : new String[] {"e.gz", "e.zst", "e.zip", "e.nmea"}) {
            java.nio.file.Path file = dir.resolve(name);
            Files.write(file, new byte[0]);
            assertEquals(List.of(), read(file, 0), name);
        }
    }

    @Test
    void aZipArchiveIsItsMembersInNameOrder() throws IOException {
        java.nio.file.Path file = dir.resolve("days.zip");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(file))) {
            for (String[] member : new String[][] {{"b.csv", "b1\nb2"}, {"a.csv", "a1\na2\n"}, {"c/", ""}}) {
                zip.putNextEntry(new ZipEntry(member[0]));
                zip.write(member[1].getBytes(StandardCharsets.UTF_8));
                zip.closeEntry();
            }
        }
        assertEquals(List.of("a1", "a2", "b1", "b2"), read(file, 0));
    }

    @Test
    void aTruncatedArchiveEndsWithOneMarkerLineNamingTheFile() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            text.append("line ").append(i).append('\n');
        }
        java.nio.file.Path whole = write("whole.gz", GZIPOutputStream::new, text.toString());
        byte[] bytes = Files.readAllBytes(whole);
        java.nio.file.Path cut = dir.resolve("cut.nmea.gz");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
        List<String> lines = read(cut, 0);
        String last = lines.get(lines.size() - 1);
        assertEquals(ArchiveLines.CORRUPT + "cut.nmea.gz\u001fgzip: truncated", last);
        for (int i = 0; i < lines.size() - 1; i++) {
            assertEquals("line " + i, lines.get(i));
        }
        java.nio.file.Path junk = dir.resolve("junk.gz");
        Files.write(junk, "not gzip at all".getBytes(StandardCharsets.UTF_8));
        List<String> junkLines = read(junk, 0);
        assertEquals(List.of(ArchiveLines.CORRUPT + "junk.gz\u001fgzip: not gzip data"), junkLines);
    }

    @Test
    void aRestoredReaderSkipsWhatItHadEmitted() throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 3000; i++) {
            text.append(i).append('\n');
        }
        java.nio.file.Path file = write("many.gz", GZIPOutputStream::new, text.toString());
        List<String> rest = read(file, 2500);
        assertEquals(500, rest.size());
        assertEquals("2500", rest.get(0));
    }
}
