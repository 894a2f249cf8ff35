package dev.modelfs.view;

import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.FloatFormat;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxQuant;
import dev.modelfs.quant.mlx.MlxTensorData;
import dev.modelfs.quant.mlx.ScaleType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * An MLX-quantized tensor (codes + scale [+ bias] [+ global scale], possibly in different blobs)
 * dequantized to an {@link OutputType}, chunked on whole quantization groups.
 */
public final class MlxConverted extends UnitConverted {
    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final LogicalTensor t;
    private final MlxQuant q;
    private final MlxDequantizer deq;
    private final ScaleType scaleType;
    private final List<BlobRef> blobs = new ArrayList<>();
    private final int codesIdx;
    private final int scalesIdx;
    private final int biasesIdx;
    private final int globalIdx;

    public MlxConverted(LogicalTensor t, OutputType out) {
        super(t.logicalNumel() / t.quant().groupSize(), t.quant().groupSize(), out);
        this.t = t;
        this.q = t.quant();
        this.deq = MlxDequantizer.of(q);
        this.scaleType = switch (t.scale().dtype()) {
            case BF16 -> ScaleType.BF16;
            case F16 -> ScaleType.F16;
            case F32 -> ScaleType.F32;
            case U8 -> ScaleType.U8;
            default -> throw new IllegalArgumentException(t.name() + ": unsupported scale dtype " + t.scale().dtype());
        };
        this.codesIdx = index(t.main());
        this.scalesIdx = index(t.scale());
        this.biasesIdx = t.bias() == null ? -1 : index(t.bias());
        this.globalIdx = t.globalScale() == null ? -1 : index(t.globalScale());
        if (t.main().bytes().length() != t.logicalNumel() / q.groupSize() * q.codeBytesPerGroup()) {
            throw new IllegalArgumentException(t.name() + ": code bytes do not match the logical shape");
        }
        if (t.globalScale() != null && t.globalScale().dtype() != Dtype.F32) {
            throw new IllegalArgumentException(t.name() + ": global scale must be F32");
        }
    }

    private int index(StoredTensor s) {
        BlobRange r = s.bytes();
        BlobRef ref = new BlobRef(r.blob(), r.blobSize());
        int i = blobs.indexOf(ref);
        if (i < 0) {
            blobs.add(ref);
            i = blobs.size() - 1;
        }
        return i;
    }

    @Override
    public List<BlobRef> blobs() {
        return blobs;
    }

    @Override
    void convert(List<MemorySegment> segs, long first, long count, FloatFormat format, MemorySegment dst) {
        float global = globalIdx < 0 ? 1f : segs.get(globalIdx).get(F32_LE, t.globalScale().bytes().offset());
        MlxTensorData data = new MlxTensorData(segs.get(codesIdx), t.main().bytes().offset(),
                segs.get(scalesIdx), t.scale().bytes().offset(), scaleType,
                biasesIdx < 0 ? null : segs.get(biasesIdx), biasesIdx < 0 ? 0 : t.bias().bytes().offset(), global);
        deq.dequantize(data, first, count, format, dst, 0);
    }

    @Override
    public String describe() {
        return t.name() + " " + q.canonicalName() + " g" + q.groupSize() + " -> " + out().dtype;
    }
}
