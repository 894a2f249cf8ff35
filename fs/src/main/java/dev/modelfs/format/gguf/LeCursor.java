package dev.modelfs.format.gguf;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.F64;
import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.format.LittleEndian.I64;

import dev.modelfs.format.FormatException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A bounds-checked little-endian read position in a segment. Every read first checks that the bytes
 * exist and throws {@link FormatException} (prefixed with the current context) otherwise, so no read
 * can fail with an index exception or go past {@code byteSize()}. Not thread-safe; one per parse.
 */
final class LeCursor {

    private final MemorySegment seg;
    private final long size;
    /** Asked to make the segment's bytes up to an offset resident before they are read ({@link #require}). */
    private final java.util.function.LongConsumer pageIn;
    /** The offset up to which {@link #pageIn} was asked. */
    private long resident;
    private long pos;
    private String context = "GGUF header";

    LeCursor(MemorySegment seg, long pos) {
        this(seg, pos, end -> { }, seg.byteSize());
    }

    /**
     * A cursor that calls {@code pageIn} with an offset before it reads a byte below it that is past {@code resident}
     * (bytes {@code [0, resident)} are resident already): in steps of {@value #PAGE_IN_STEP} bytes, at most once per step.
     */
    LeCursor(MemorySegment seg, long pos, java.util.function.LongConsumer pageIn, long resident) {
        this.seg = seg;
        this.size = seg.byteSize();
        this.pos = pos;
        this.pageIn = pageIn;
        this.resident = resident;
    }

    /** How far ahead {@link #pageIn} is asked each time the cursor passes what it asked for. */
    static final long PAGE_IN_STEP = 4L << 20;

    /** Sets the description used as prefix of error messages (e.g. {@code "GGUF KV #3 \"a.b\""}). */
    void context(String context) {
        this.context = context;
    }

    String context() {
        return context;
    }

    FormatException error(String message) {
        return new FormatException(context + ": " + message);
    }

    long pos() {
        return pos;
    }

    long remaining() {
        return size - pos;
    }

    /** Throws unless {@code n >= 0} bytes are left at the position. */
    void require(long n, String what) {
        if (n < 0 || n > size - pos) {
            throw error("truncated: " + what + " needs " + (n < 0 ? Long.toUnsignedString(n) : n) + " bytes at offset "
                    + pos + ", file has " + size);
        }
        if (pos + n > resident) {
            resident = Math.min(size, Math.max(pos + n, resident + PAGE_IN_STEP));
            pageIn.accept(resident);
        }
    }

    byte i8() {
        require(1, "a 1-byte value");
        return seg.get(ValueLayout.JAVA_BYTE, pos++);
    }

    short i16() {
        require(2, "a 2-byte value");
        short v = seg.get(I16, pos);
        pos += 2;
        return v;
    }

    int i32() {
        require(4, "a 4-byte value");
        int v = seg.get(I32, pos);
        pos += 4;
        return v;
    }

    long i64() {
        require(8, "an 8-byte value");
        long v = seg.get(I64, pos);
        pos += 8;
        return v;
    }

    float f32() {
        require(4, "a float32");
        float v = seg.get(F32, pos);
        pos += 4;
        return v;
    }

    double f64() {
        require(8, "a float64");
        double v = seg.get(F64, pos);
        pos += 8;
        return v;
    }

    /** Copies {@code n} bytes (caller bounds {@code n} to something sane first). */
    byte[] bytes(int n, String what) {
        require(n, what);
        byte[] b = new byte[n];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, b, 0, n);
        pos += n;
        return b;
    }
}
