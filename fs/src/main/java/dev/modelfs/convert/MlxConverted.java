package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxQuant;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * An MLX-quantized tensor (codes + scale [+ bias] [+ global scale], possibly in different blobs)
 * dequantized to an {@link OutputType}, chunked on whole quantization groups.
 */
public final class MlxConverted extends UnitConverted {
    private final MlxParts parts;
    private final MlxQuant q;
    private final MlxDequantizer deq;

    public MlxConverted(LogicalTensor t, OutputType out) {
        super(t.logicalNumel() / t.quant().groupSize(), t.quant().groupSize(), out);
        this.parts = new MlxParts(t);
        this.q = t.quant();
        this.deq = MlxDequantizer.of(q);
    }

    @Override
    public List<BlobRef> blobs() {
        return parts.blobs();
    }

    /** Cut at the groups where the global scale changes (one per expert of a stacked nvfp4 tensor). */
    @Override
    void convert(List<MemorySegment> segs, long first, long count, FloatFormat format, MemorySegment dst) {
        long per = parts.groupsPerGlobal();
        for (long g = first; g < first + count; ) {
            long n = Math.min(first + count, (g / per + 1) * per) - g;
            deq.dequantize(parts.data(segs, g), g, n, format, dst, (g - first) * q.groupSize() * format.bytes);
            g += n;
        }
    }

    @Override
    public String describe() {
        return parts.t.name() + " " + q.canonicalName() + " g" + q.groupSize() + " -> " + out().dtype;
    }
}
