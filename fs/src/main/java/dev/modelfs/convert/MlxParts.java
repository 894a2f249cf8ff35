package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.mlx.MlxTensorData;
import dev.modelfs.quant.mlx.ScaleType;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the pieces of one MLX-quantized tensor live: the distinct blobs of its codes, scales, biases
 * and global scale (in {@link #blobs()} order) and, given those blobs mapped, the
 * {@link MlxTensorData} the dequantizer reads.
 *
 * <p>Invariants: every piece's blob is in {@link #blobs()} exactly once; the code bytes match the
 * logical shape; a global scale is F32.
 */
public final class MlxParts {

    final LogicalTensor t;
    final ScaleType scaleType;
    private final List<BlobRef> blobs = new ArrayList<>();
    final int codesIdx;
    final int scalesIdx;
    final int biasesIdx;
    private final int globalIdx;

    public MlxParts(LogicalTensor t) {
        this.t = t;
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
        long groups = t.logicalNumel() / t.quant().groupSize();
        if (t.main().bytes().length() != groups * t.quant().codeBytesPerGroup()) {
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

    public List<BlobRef> blobs() {
        return blobs;
    }

    /** The tensor's data in the mapped blobs {@code segs} (in {@link #blobs()} order). */
    public MlxTensorData data(List<MemorySegment> segs) {
        float global = globalIdx < 0 ? 1f : segs.get(globalIdx).get(F32, t.globalScale().bytes().offset());
        return new MlxTensorData(segs.get(codesIdx), t.main().bytes().offset(),
                segs.get(scalesIdx), t.scale().bytes().offset(), scaleType,
                biasesIdx < 0 ? null : segs.get(biasesIdx), biasesIdx < 0 ? 0 : t.bias().bytes().offset(), global);
    }
}
