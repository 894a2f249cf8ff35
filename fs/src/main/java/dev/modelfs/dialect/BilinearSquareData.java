package dev.modelfs.dialect;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.format.LittleEndian;
import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The data of a {@link TensorOp.BilinearSquare}: a square position table at {@code blob@at} resampled to another side in
 * F32, as Ollama's {@code register_nemotron3_position_embedding} computes it (docs/FORMATS.md §12.17): output position
 * {@code (y, x)} reads source coordinates {@code y·(S-1)/(T-1)}, {@code x·(S-1)/(T-1)} (in double; 0 when {@code T = 1}),
 * weights {@code wy}, {@code wx} their fractions as floats, and is
 * {@code (v00·(1-wx) + v01·wx)·(1-wy) + (v10·(1-wx) + v11·wx)·wy} in float per element.
 *
 * <p>Invariants: the whole source table lies inside the blob (checked at construction); a chunk is whole output
 * positions and reads only the source positions around them.
 */
final class BilinearSquareData extends ConvertedData {
    private final TensorOp.BilinearSquare op;
    private final BlobRef blob;
    private final long at;
    private final String name;
    private final long positionsPerChunk;
    private final int elementBytes;

    BilinearSquareData(TensorOp.BilinearSquare op, BlobRef blob, long at, String name) {
        if (op.source() != GgmlType.F16 && op.source() != GgmlType.BF16 && op.source() != GgmlType.F32) {
            throw new IllegalArgumentException(name + ": a position table of " + op.source());
        }
        this.op = op;
        this.blob = blob;
        this.at = at;
        this.name = name;
        this.elementBytes = op.source() == GgmlType.F32 ? 4 : 2;
        long sourceBytes = Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(op.sourceSide(), op.sourceSide()), op.embedding()), elementBytes);
        if (at < 0 || Math.addExact(at, sourceBytes) > blob.expectedSize()) {
            throw new IllegalArgumentException(name + ": tensor data outside its blob");
        }
        Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(op.targetSide(), op.targetSide()), op.embedding()), 4L);
        this.positionsPerChunk = Math.max(1, CHUNK_TARGET / (op.embedding() * 4));
    }

    @Override
    public long length() {
        return op.targetSide() * op.targetSide() * op.embedding() * 4;
    }

    @Override
    public long chunkBytes() {
        return positionsPerChunk * op.embedding() * 4;
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment out) {
        MemorySegment src = blobs.getFirst();
        long s = op.sourceSide();
        long t = op.targetSide();
        long emb = op.embedding();
        long first = chunk * positionsPerChunk;
        long n = chunkLength(chunk) / (emb * 4);
        for (long p = 0; p < n; p++) {
            long y = (first + p) / t;
            long x = (first + p) % t;
            double sy = alignCorners(y, t, s);
            double sx = alignCorners(x, t, s);
            long y0 = (long) Math.floor(sy);
            long y1 = Math.min(y0 + 1, s - 1);
            long x0 = (long) Math.floor(sx);
            long x1 = Math.min(x0 + 1, s - 1);
            float wy = (float) (sy - y0);
            float wx = (float) (sx - x0);
            long r00 = (y0 * s + x0) * emb;
            long r01 = (y0 * s + x1) * emb;
            long r10 = (y1 * s + x0) * emb;
            long r11 = (y1 * s + x1) * emb;
            long o = p * emb * 4;
            for (long e = 0; e < emb; e++) {
                float top = value(src, r00 + e) * (1.0f - wx) + value(src, r01 + e) * wx;
                float bottom = value(src, r10 + e) * (1.0f - wx) + value(src, r11 + e) * wx;
                out.set(LittleEndian.F32, o + e * 4, top * (1.0f - wy) + bottom * wy);
            }
        }
    }

    /** {@code nemotron3_align_corners}. */
    static double alignCorners(long target, long targetSide, long sourceSide) {
        return targetSide <= 1 ? 0.0 : (double) target * (double) (sourceSide - 1) / (double) (targetSide - 1);
    }

    private float value(MemorySegment src, long element) {
        long off = at + element * elementBytes;
        return switch (op.source()) {
            case F32 -> src.get(LittleEndian.F32, off);
            case F16 -> Float.float16ToFloat(src.get(LittleEndian.I16, off));
            default -> Float.intBitsToFloat((src.get(LittleEndian.I16, off) & 0xffff) << 16);
        };
    }

    @Override
    public String describe() {
        return name + " bilinear " + op.sourceSide() + "² -> " + op.targetSide() + "² positions, " + op.source().name() + " -> F32";
    }
}
