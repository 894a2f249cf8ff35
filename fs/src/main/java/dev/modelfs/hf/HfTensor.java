package dev.modelfs.hf;

import dev.modelfs.format.Shapes;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * One tensor of the Hugging Face view of a GGUF model: a whole GGUF tensor, or one expert's slice of a
 * stacked one, under its HF name, optionally with its rows reordered.
 *
 * <p>Invariants: {@code [byteOffset, byteOffset + byteLength)} lies inside {@code source}'s data (offsets
 * relative to the start of that tensor's data) and holds {@code rows} whole rows of {@code source.ne()[0]}
 * elements; {@code shape} is row-major with {@code shape[0] == rows} for 2-D tensors; {@code sourceRow},
 * when not null, maps an HF row to the GGUF row holding it and is a permutation of {@code [0, rows)};
 * {@code add} is added (in f32) to every stored value to give the HF value, and is 0 unless the source
 * is a 1-D F32 tensor with no row map (Gemma's norm weights stored as {@code 1 + w}: {@code add = -1}).
 * {@code parts} is null unless the tensor is fused from several GGUF tensors ({@code ArchSpec.Fused}): then its
 * bytes are those of {@code parts} (slices as above, one per expert and GGUF tensor, in HF order) one after the
 * other, and {@code source}, offsets and rows are the first part's.
 */
public record HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                       LongUnaryOperator sourceRow, float add, List<HfTensor> parts) {

    /** A tensor whose HF values are the stored ones. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, 0f, null);
    }

    /** A tensor of one GGUF tensor, {@code add} added to every stored value. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, null);
    }

    /** A tensor fused from {@code parts} (whole-row slices of GGUF tensors, in HF order) under {@code name} with {@code shape}. */
    public static HfTensor fused(String name, long[] shape, List<HfTensor> parts) {
        HfTensor f = parts.getFirst();
        return new HfTensor(name, f.source(), shape, f.byteOffset(), f.byteLength(), f.rows(), null, 0f, List.copyOf(parts));
    }

    /** Elements of this tensor. */
    public long elements() {
        return Shapes.product(shape);
    }
}
