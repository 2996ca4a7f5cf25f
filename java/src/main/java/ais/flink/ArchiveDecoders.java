package ais.flink;

import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.ZipException;

import org.apache.commons.compress.compressors.bzip2.BZip2CompressorInputStream;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.shaded.io.airlift.compress.zstd.ZstdIncrementalFrameDecompressor;
import org.tukaani.xz.LZMAInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * The decompressors of {@link ArchiveLines}, each giving every byte it can decode before a fault
 * (in its format's units: deflate to the byte, bzip2 by block, xz by LZMA2 chunk, zstd by block),
 * then an {@link ArchiveFault} in the same words as the plain loop's reader
 * ({@code ais_pipeline.archives}).
 */
final class ArchiveDecoders {
    private ArchiveDecoders() {}

    /** Why a file cannot be read to its end, in the words both readers use. */
    static final class ArchiveFault extends IOException {
        private static final long serialVersionUID = 1L;

        ArchiveFault(String message) {
            super(message);
        }
    }

    /** Raw bytes that remember whether a read found their end. */
    static final class Ending extends FilterInputStream {
        boolean ended;

        Ending(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            ended |= b < 0;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            ended |= n < 0;
            return n;
        }
    }

    /**
     * A decompressor's bytes with its faults named: the format's "truncated" when the raw bytes
     * had ended, else its "corrupt data". Bytes read before a fault are given before it.
     */
    static final class Named extends InputStream {
        private final InputStream in;
        private final Ending raw;
        private final String format;
        private final boolean byteWise;
        private IOException pending;

        /**
         * format: the faults' prefix (none for a zip member's); byteWise: read a byte at a time (a
         * decompressor whose bulk read loses the read's bytes on a fault).
         */
        Named(InputStream in, Ending raw, String format, boolean byteWise) {
            this.in = in;
            this.raw = raw;
            this.format = format;
            this.byteWise = byteWise;
        }

        private IOException named(Exception e) {
            if (e instanceof ArchiveFault) {
                return (ArchiveFault) e;
            }
            if ("gzip".equals(format) && e instanceof ZipException && "Corrupt GZIP trailer".equals(e.getMessage())) {
                return new ArchiveFault("gzip: CRC-32 or size mismatch");
            }
            String what = raw.ended || e instanceof EOFException ? "truncated" : "corrupt data";
            return new ArchiveFault(format.isEmpty() ? what : format + ": " + what);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (pending != null) {
                throw pending;
            }
            int n = 0;
            try {
                if (!byteWise) {
                    return in.read(b, off, len);
                }
                int c;
                while (n < len && (c = in.read()) >= 0) {
                    b[off + n++] = (byte) c;
                }
            } catch (IOException | RuntimeException e) {
                pending = named(e);
                if (n == 0) {
                    throw pending;
                }
            }
            return n == 0 && len > 0 ? -1 : n;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** Reads of an xz stream that stay within one LZMA2 chunk, so that a fault at the next loses none. */
    static final class ChunkWise extends FilterInputStream {
        ChunkWise(InputStream in) {
            super(in);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int available = in.available();
            return in.read(b, off, available > 0 ? Math.min(len, available) : Math.min(len, 1));
        }
    }

    static InputStream gzip(Ending raw) throws IOException {
        raw.mark(2);
        int b0 = raw.read();
        int b1 = raw.read();
        raw.reset();
        raw.ended = false;
        if (b1 >= 0 && (b0 != 0x1f || b1 != 0x8b)) {
            throw new ArchiveFault("gzip: not gzip data");
        }
        try {
            return new Named(new GZIPInputStream(raw, 1 << 16), raw, "gzip", false);
        } catch (IOException | RuntimeException e) {
            throw new Named(InputStream.nullInputStream(), raw, "gzip", false).named(e);
        }
    }

    static InputStream bzip2(Ending raw) throws IOException {
        try {
            return new Named(new BZip2CompressorInputStream(raw, true), raw, "bzip2", true);
        } catch (IOException | RuntimeException e) {
            throw new Named(InputStream.nullInputStream(), raw, "bzip2", false).named(e);
        }
    }

    static InputStream xz(Ending raw) throws IOException {
        try {
            return new Named(new ChunkWise(new XZInputStream(raw)), raw, "xz", false);
        } catch (IOException | RuntimeException e) {
            throw new Named(InputStream.nullInputStream(), raw, "xz", false).named(e);
        }
    }

    // ---------------------------------------------------------------------------------------
    // zstd: the frames walked so that airlift's decompressor gets each block whole; the frame's
    // checksum flag is cleared on the way in and its checksum checked here, so that a frame cut
    // short can be ended with an empty last block and give all its whole blocks.

    static final class Zstd extends InputStream {
        private static final int MAGIC = 0xFD2FB528;
        private static final long BASE = sun.misc.Unsafe.ARRAY_BYTE_BASE_OFFSET;
        private static final byte[] LAST_EMPTY_BLOCK = {1, 0, 0};

        private final Ending raw;
        private ZstdIncrementalFrameDecompressor frame;
        private XxHash64 hash;
        private boolean checksum;
        private byte[] out = new byte[1 << 17];
        private int outAt;
        private int outEnd;
        private IOException pending;
        private boolean done;

        Zstd(Ending raw) {
            this.raw = raw;
        }

        private byte[] whole(int n) throws IOException {
            byte[] piece = raw.readNBytes(n);
            if (piece.length < n) {
                throw new ArchiveFault("zstd: truncated");
            }
            return piece;
        }

        private static int le(byte[] b, int at, int n) {
            int v = 0;
            for (int i = n - 1; i >= 0; i--) {
                v = (v << 8) | (b[at + i] & 0xFF);
            }
            return v;
        }

        /** The next frame's pieces fed, until at least one byte is out or the file ends. */
        private void step() throws IOException {
            if (frame == null) {
                byte[] first = raw.readNBytes(4);
                if (first.length == 0) {
                    done = true;
                    return;
                }
                if (first.length < 4) {
                    throw new ArchiveFault("zstd: truncated");
                }
                int magic = le(first, 0, 4);
                if ((magic & 0xFFFFFFF0) == 0x184D2A50) { // a skippable frame
                    for (long left = le(whole(4), 0, 4) & 0xFFFFFFFFL; left > 0; left--) {
                        if (raw.read() < 0) {
                            throw new ArchiveFault("zstd: truncated");
                        }
                    }
                    return;
                }
                byte[] fhd = whole(1);
                if (magic != MAGIC) {
                    throw new ArchiveFault("zstd: corrupt data");
                }
                int d = fhd[0] & 0xFF;
                boolean single = (d & 0x20) != 0;
                int size = (single ? 0 : 1) + new int[] {0, 1, 2, 4}[d & 3] + new int[] {single ? 1 : 0, 2, 4, 8}[d >>> 6];
                byte[] header = new byte[5 + size];
                System.arraycopy(first, 0, header, 0, 4);
                header[4] = (byte) (d & ~4); // the checksum is checked here
                System.arraycopy(whole(size), 0, header, 5, size);
                checksum = (d & 4) != 0;
                hash = checksum ? new XxHash64() : null;
                frame = new ZstdIncrementalFrameDecompressor();
                feed(header);
                return;
            }
            byte[] head = raw.readNBytes(3);
            if (head.length < 3) {
                feed(LAST_EMPTY_BLOCK); // every whole block out
                throw new ArchiveFault("zstd: truncated");
            }
            int h = le(head, 0, 3);
            int kind = (h >>> 1) & 3;
            int length = kind == 1 ? 1 : h >>> 3;
            byte[] body = raw.readNBytes(length);
            if (body.length < length) {
                feed(LAST_EMPTY_BLOCK);
                throw new ArchiveFault("zstd: truncated");
            }
            byte[] block = new byte[3 + length];
            System.arraycopy(head, 0, block, 0, 3);
            System.arraycopy(body, 0, block, 3, length);
            feed(block);
            if ((h & 1) != 0) {
                if (checksum) {
                    byte[] sum = raw.readNBytes(4);
                    if (sum.length < 4) {
                        throw new ArchiveFault("zstd: truncated");
                    }
                    if (le(sum, 0, 4) != (int) hash.hash()) {
                        throw new ArchiveFault("zstd: checksum mismatch");
                    }
                }
                frame = null;
            }
        }

        private void feed(byte[] piece) throws ArchiveFault {
            int at = 0;
            try {
                while (true) {
                    if (outEnd == out.length) {
                        out = java.util.Arrays.copyOf(out, out.length * 2);
                    }
                    frame.partialDecompress(piece, BASE + at, BASE + piece.length, out, outEnd, out.length);
                    at += frame.getInputConsumed();
                    int produced = frame.getOutputBufferUsed();
                    if (hash != null) {
                        hash.update(out, outEnd, produced);
                    }
                    outEnd += produced;
                    if (frame.getRequestedOutputSize() == 0 && (at == piece.length || frame.getInputRequired() > piece.length - at)) {
                        return;
                    }
                }
            } catch (RuntimeException e) {
                throw new ArchiveFault("zstd: corrupt data");
            }
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            while (outAt == outEnd) {
                if (pending != null) {
                    throw pending;
                }
                if (done) {
                    return -1;
                }
                outAt = 0;
                outEnd = 0;
                try {
                    step();
                } catch (ArchiveFault e) {
                    pending = e;
                }
            }
            int n = Math.min(len, outEnd - outAt);
            System.arraycopy(out, outAt, b, off, n);
            outAt += n;
            return n;
        }

        @Override
        public void close() throws IOException {
            raw.close();
        }
    }

    /** XXH64 (seed 0), for the zstd content checksum. */
    static final class XxHash64 {
        private static final long P1 = 0x9E3779B185EBCA87L;
        private static final long P2 = 0xC2B2AE3D27D4EB4FL;
        private static final long P3 = 0x165667B19E3779F9L;
        private static final long P4 = 0x85EBCA77C2B2AE63L;
        private static final long P5 = 0x27D4EB2F165667C5L;
        private long v1 = P1 + P2;
        private long v2 = P2;
        private long v3 = 0;
        private long v4 = -P1;
        private final byte[] buffer = new byte[32];
        private int buffered;
        private long total;

        private static long round(long acc, long input) {
            return Long.rotateLeft(acc + input * P2, 31) * P1;
        }

        private static long merge(long acc, long v) {
            return (acc ^ round(0, v)) * P1 + P4;
        }

        private static long le64(byte[] b, int at) {
            long v = 0;
            for (int i = 7; i >= 0; i--) {
                v = (v << 8) | (b[at + i] & 0xFFL);
            }
            return v;
        }

        void update(byte[] b, int off, int len) {
            total += len;
            while (len > 0) {
                int n = Math.min(len, 32 - buffered);
                System.arraycopy(b, off, buffer, buffered, n);
                buffered += n;
                off += n;
                len -= n;
                if (buffered == 32) {
                    v1 = round(v1, le64(buffer, 0));
                    v2 = round(v2, le64(buffer, 8));
                    v3 = round(v3, le64(buffer, 16));
                    v4 = round(v4, le64(buffer, 24));
                    buffered = 0;
                }
            }
        }

        long hash() {
            long h;
            if (total >= 32) {
                h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
                h = merge(merge(merge(merge(h, v1), v2), v3), v4);
            } else {
                h = v3 + P5;
            }
            h += total;
            int at = 0;
            for (; at + 8 <= buffered; at += 8) {
                h = Long.rotateLeft(h ^ round(0, le64(buffer, at)), 27) * P1 + P4;
            }
            if (at + 4 <= buffered) {
                long k = (buffer[at] & 0xFFL) | (buffer[at + 1] & 0xFFL) << 8 | (buffer[at + 2] & 0xFFL) << 16
                        | (buffer[at + 3] & 0xFFL) << 24;
                h = Long.rotateLeft(h ^ k * P1, 23) * P2 + P3;
                at += 4;
            }
            for (; at < buffered; at++) {
                h = Long.rotateLeft(h ^ (buffer[at] & 0xFFL) * P5, 11) * P1;
            }
            h ^= h >>> 33;
            h *= P2;
            h ^= h >>> 29;
            h *= P3;
            return h ^ (h >>> 32);
        }
    }

    // ---------------------------------------------------------------------------------------
    // zip members: raw bytes decoded by method, checked against the member's CRC-32 and size.

    /** A member's bytes decoded and checked; its faults name it. */
    static final class Member extends InputStream {
        private final InputStream in;
        private final Ending raw;
        private final String name;
        private final long size;
        private final long crc;
        private final CRC32 seen = new CRC32();
        private long count;
        private IOException pending;

        Member(InputStream in, Ending raw, String name, long size, long crc) {
            this.in = in;
            this.raw = raw;
            this.name = name;
            this.size = size;
            this.crc = crc;
        }

        private IOException named(Exception e) {
            String what = e instanceof ArchiveFault ? e.getMessage()
                    : raw.ended || e instanceof EOFException ? "truncated" : "corrupt data";
            return new ArchiveFault("zip member " + name + ": " + what);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (pending != null) {
                throw pending;
            }
            int n;
            try {
                n = in.read(b, off, len);
            } catch (IOException | RuntimeException e) {
                throw pending = named(e);
            }
            if (n > 0) {
                seen.update(b, off, n);
                count += n;
                return n;
            }
            if (count != size) {
                throw pending = new ArchiveFault("zip member " + name + ": size mismatch");
            }
            if (seen.getValue() != crc) {
                throw pending = new ArchiveFault("zip member " + name + ": CRC-32 mismatch");
            }
            return -1;
        }
    }

    /** Raw deflate: every byte inflated before the data ends or turns out bad. */
    static final class Inflating extends InputStream {
        private final InputStream raw;
        private final Inflater inflater = new Inflater(true);
        private final byte[] input = new byte[1 << 16];

        Inflating(InputStream raw) {
            this.raw = raw;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                while (true) {
                    if (inflater.finished()) {
                        return -1;
                    }
                    int n = inflater.inflate(b, off, len);
                    if (n > 0) {
                        return n;
                    }
                    if (inflater.needsDictionary()) {
                        throw new ArchiveFault("corrupt data");
                    }
                    if (inflater.needsInput()) {
                        int got = raw.read(input, 0, input.length);
                        if (got < 0) {
                            throw new ArchiveFault("truncated");
                        }
                        inflater.setInput(input, 0, got);
                    }
                }
            } catch (DataFormatException e) {
                throw new ArchiveFault("corrupt data");
            }
        }

        @Override
        public void close() {
            inflater.end();
        }
    }

    /** A zip member's decoded bytes, by its method: stored (0), deflated (8), bzip2 (12), LZMA (14). */
    static InputStream member(int method, Ending raw, long size) throws IOException {
        switch (method) {
            case 0:
                return raw;
            case 8:
                return new Inflating(raw);
            case 12:
                return new Named(new BZip2CompressorInputStream(raw, false), raw, "", true);
            case 14: {
                byte[] head = raw.readNBytes(4);
                if (head.length < 4) {
                    throw new ArchiveFault("truncated");
                }
                int propsSize = (head[2] & 0xFF) | (head[3] & 0xFF) << 8;
                byte[] props = raw.readNBytes(propsSize);
                if (props.length < propsSize) {
                    throw new ArchiveFault("truncated");
                }
                if (propsSize != 5) {
                    throw new ArchiveFault("corrupt data");
                }
                int dictSize = (props[1] & 0xFF) | (props[2] & 0xFF) << 8 | (props[3] & 0xFF) << 16 | (props[4] & 0xFF) << 24;
                LZMAInputStream lzma = new LZMAInputStream(raw, size, props[0], dictSize);
                lzma.enableRelaxedEndCondition(); // an end marker after the member's size, or none
                return lzma;
            }
            default:
                throw new IllegalArgumentException("method " + method);
        }
    }

    /** A Flink file opened for random access, for the zip reader's central directory. */
    static final class Channel implements SeekableByteChannel {
        private final FSDataInputStream in;
        private final long size;
        private boolean open = true;

        Channel(FSDataInputStream in, long size) {
            this.in = in;
            this.size = size;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            if (!open) {
                throw new ClosedChannelException();
            }
            int want = dst.remaining();
            if (want == 0) {
                return 0;
            }
            byte[] chunk = new byte[Math.min(want, 1 << 16)];
            int n = in.read(chunk, 0, chunk.length);
            if (n > 0) {
                dst.put(chunk, 0, n);
            }
            return n;
        }

        @Override
        public int write(ByteBuffer src) {
            throw new NonWritableChannelException();
        }

        @Override
        public long position() throws IOException {
            return in.getPos();
        }

        @Override
        public SeekableByteChannel position(long newPosition) throws IOException {
            in.seek(newPosition);
            return this;
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public SeekableByteChannel truncate(long size) {
            throw new NonWritableChannelException();
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() throws IOException {
            open = false;
            in.close();
        }
    }

    // ---------------------------------------------------------------------------------------

    /**
     * UTF-8 with one U+FFFD per maximal invalid subpart (the Unicode recommendation, as Python's
     * {@code errors="replace"} decodes). The JDK's decoder differs on encoded surrogates
     * ({@code ED A0..BF ..}): one U+FFFD for the three bytes where the recommendation has three.
     */
    static String utf8(byte[] b, int off, int len) {
        String fast = new String(b, off, len, StandardCharsets.UTF_8);
        if (fast.indexOf('\uFFFD') < 0) {
            return fast;
        }
        StringBuilder s = new StringBuilder(len);
        int i = off;
        int end = off + len;
        while (i < end) {
            int c = b[i] & 0xFF;
            if (c < 0x80) {
                s.append((char) c);
                i++;
                continue;
            }
            int need;
            int lo = 0x80;
            int hi = 0xBF;
            if (c >= 0xC2 && c <= 0xDF) {
                need = 1;
            } else if (c >= 0xE0 && c <= 0xEF) {
                need = 2;
                if (c == 0xE0) {
                    lo = 0xA0;
                } else if (c == 0xED) {
                    hi = 0x9F;
                }
            } else if (c >= 0xF0 && c <= 0xF4) {
                need = 3;
                if (c == 0xF0) {
                    lo = 0x90;
                } else if (c == 0xF4) {
                    hi = 0x8F;
                }
            } else {
                s.append('\uFFFD');
                i++;
                continue;
            }
            int cp = c & (0x3F >> need);
            int j = i + 1;
            int got = 0;
            while (got < need && j < end) {
                int d = b[j] & 0xFF;
                if (d < lo || d > hi) {
                    break;
                }
                cp = (cp << 6) | (d & 0x3F);
                lo = 0x80;
                hi = 0xBF;
                j++;
                got++;
            }
            if (got == need) {
                s.appendCodePoint(cp);
            } else {
                s.append('\uFFFD');
            }
            i = j;
        }
        return s.toString();
    }
}
