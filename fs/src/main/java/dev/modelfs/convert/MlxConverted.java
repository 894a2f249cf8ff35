package dev.modelfs.convert;

import dev.modelfs.model.BlobRange;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
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

    @Override
    void convert(List<MemorySegment> segs, long first, long count, FloatFormat format, MemorySegment dst) {
        deq.dequantize(parts.data(segs), first, count, format, dst, 0);
    }

    @Override
    protected String identity() {
        StringBuilder b = new StringBuilder("mlx ").append(q).append(' ').append(parts.t.logicalNumel()).append(" -> ").append(out());
        for (StoredTensor s : new StoredTensor[] {parts.t.main(), parts.t.scale(), parts.t.bias(), parts.t.globalScale()}) {
            b.append(" | ");
            if (s != null) {
                BlobRange r = s.bytes();
                b.append(s.dtype()).append(' ').append(r.blob().hex()).append(' ').append(r.blobSize())
                        .append(" @").append(r.offset()).append('+').append(r.length());
            }
        }
        return b.toString();
    }

    @Override
    public String kernel() {
        return "MLX " + q.mode() + " " + q.bits() + "-bit, " + parts.scaleType + " scales -> " + out();
    }

    @Override
    public String describe() {
        return parts.t.name() + " " + q.canonicalName() + " g" + q.groupSize() + " -> " + out().dtype;
    }
}
