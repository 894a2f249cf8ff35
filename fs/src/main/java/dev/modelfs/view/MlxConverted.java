package dev.modelfs.view;

import dev.modelfs.model.LogicalTensor;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxQuant;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * An MLX-quantized tensor (codes + scale [+ bias] [+ global scale], possibly in different blobs)
 * dequantized to an {@link OutputType}, chunked on whole quantization groups.
 */
public final class MlxConverted extends ConvertedData {
    private final MlxParts parts;
    private final MlxQuant q;
    private final MlxDequantizer deq;
    private final OutputType out;
    private final long groups;
    private final long groupsPerChunk;

    public MlxConverted(LogicalTensor t, OutputType out) {
        this.parts = new MlxParts(t);
        this.q = t.quant();
        this.deq = MlxDequantizer.of(q);
        this.out = out;
        this.groups = t.logicalNumel() / q.groupSize();
        this.groupsPerChunk = Math.max(1, BlockConverted.CHUNK_TARGET / ((long) q.groupSize() * out.bytes));
    }

    @Override
    public long length() {
        return groups * q.groupSize() * out.bytes;
    }

    @Override
    public long chunkBytes() {
        return groupsPerChunk * q.groupSize() * out.bytes;
    }

    @Override
    public List<BlobRef> blobs() {
        return parts.blobs();
    }

    @Override
    public void compute(long chunk, List<MemorySegment> segs, MemorySegment dst) {
        long first = chunk * groupsPerChunk;
        long n = Math.min(groupsPerChunk, groups - first);
        long elems = n * q.groupSize();
        MemorySegment f32 = Scratch.f32(elems * 4);
        deq.dequantize(parts.data(segs), first, n, f32, 0);
        out.narrowInto(f32, elems, dst);
    }

    @Override
    public String describe() {
        return parts.t.name() + " " + q.canonicalName() + " g" + q.groupSize() + " -> " + out.dtype;
    }
}
