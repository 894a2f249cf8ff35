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
 * logical shape; a global scale is F32, one value or one per index of the first axis (each covering
 * {@link #groupsPerGlobal()} consecutive groups).
 */
public final class MlxParts {

    final LogicalTensor t;
    final ScaleType scaleType;
    private final List<BlobRef> blobs = new ArrayList<>();
    final int codesIdx;
    final int scalesIdx;
    final int biasesIdx;
    private final int globalIdx;
    private final long groupsPerGlobal;

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
        long globals = t.globalScale() == null ? 1 : t.globalScale().numel();
        if (globals < 1 || groups % globals != 0) {
            throw new IllegalArgumentException(t.name() + ": " + globals + " global scales do not divide " + groups + " groups");
        }
        this.groupsPerGlobal = groups / globals;
    }

    /** How many consecutive groups share one global scale (all of them when there is at most one). */
    public long groupsPerGlobal() {
        return groupsPerGlobal;
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

    /**
     * Touches every page of the codes, scales and biases of groups {@code [from, to)} in the mapped blobs {@code segs}
     * ({@link GuardedPages}), so that a page that cannot be read fails here, before a vector kernel loads it.
     */
    void touch(List<MemorySegment> segs, long from, long to) {
        long groups = t.logicalNumel() / t.quant().groupSize();
        touch(segs.get(codesIdx), t.main(), groups, from, to);
        touch(segs.get(scalesIdx), t.scale(), groups, from, to);
        if (biasesIdx >= 0) {
            touch(segs.get(biasesIdx), t.bias(), groups, from, to);
        }
    }

    private static void touch(MemorySegment seg, StoredTensor s, long groups, long from, long to) {
        long perGroup = s.bytes().length() / groups;
        GuardedPages.touch(seg, s.bytes().offset() + from * perGroup, s.bytes().offset() + to * perGroup);
    }

    /** The tensor's data in the mapped blobs {@code segs} (in {@link #blobs()} order), with the global scale of group 0. */
    public MlxTensorData data(List<MemorySegment> segs) {
        return data(segs, 0);
    }

    /**
     * The tensor's data with the global scale that applies to {@code group} (right for the groups
     * {@code [g, g + groupsPerGlobal())} where {@code g} is {@code group} rounded down to a multiple of it).
     */
    public MlxTensorData data(List<MemorySegment> segs, long group) {
        float global = globalIdx < 0 ? 1f
                : segs.get(globalIdx).get(F32, t.globalScale().bytes().offset() + group / groupsPerGlobal * Float.BYTES);
        return new MlxTensorData(segs.get(codesIdx), t.main().bytes().offset(),
                segs.get(scalesIdx), t.scale().bytes().offset(), scaleType,
                biasesIdx < 0 ? null : segs.get(biasesIdx), biasesIdx < 0 ? 0 : t.bias().bytes().offset(), global);
    }
}
