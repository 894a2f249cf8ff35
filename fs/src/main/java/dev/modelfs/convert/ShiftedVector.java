package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * A small F32 vector with a constant added to every element, in an {@link OutputType}: the Hugging Face
 * value of a norm weight that llama.cpp's converter stored shifted (Gemma's {@code 1 + w},
 * docs/FORMATS.md §7.3), computed as {@code stored + shift} in f32 and then narrowed once (round to
 * nearest even) to the output type. One chunk.
 *
 * <p>Invariants: {@code count} LE f32 values at {@code srcOffset} lie inside the blob; output length
 * {@code count * out.bytes}; {@code count} is at most {@link #MAX_ELEMENTS}, so a chunk is small.
 */
public final class ShiftedVector extends ConvertedData {
    /** The largest vector served this way (a norm weight is one hidden size or one head dimension). */
    public static final long MAX_ELEMENTS = 1 << 20;

    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

    private final BlobRef blob;
    private final long srcOffset;
    private final long count;
    private final float shift;
    private final OutputType out;
    private final String what;

    public ShiftedVector(BlobRef blob, long srcOffset, long count, float shift, OutputType out, String what) {
        if (count <= 0 || count > MAX_ELEMENTS) {
            throw new IllegalArgumentException(what + ": " + count + " elements is not a small vector");
        }
        if (srcOffset < 0 || Math.addExact(srcOffset, count * 4) > blob.expectedSize()) {
            throw new IllegalArgumentException(what + ": tensor data outside its blob");
        }
        this.blob = blob;
        this.srcOffset = srcOffset;
        this.count = count;
        this.shift = shift;
        this.out = out;
        this.what = what;
    }

    @Override
    public long length() {
        return count * out.bytes;
    }

    @Override
    public long chunkBytes() {
        return length();
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        MemorySegment src = blobs.getFirst();
        MemorySegment f32 = out == OutputType.F32 ? dst : MemorySegment.ofArray(new float[(int) count]);
        for (long i = 0; i < count; i++) {
            f32.set(F32, i * 4, src.get(F32, srcOffset + i * 4) + shift);
        }
        if (out != OutputType.F32) {
            out.format.fromF32(f32, 0, dst, 0, count);
        }
    }

    @Override
    public String describe() {
        return what + " " + (shift < 0 ? "- " + (-shift) : "+ " + shift) + " -> " + out.dtype;
    }
}
