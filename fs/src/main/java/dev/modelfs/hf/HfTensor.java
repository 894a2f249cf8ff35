package dev.modelfs.hf;

import dev.modelfs.format.Shapes;
import dev.modelfs.format.gguf.GgufTensorInfo;
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
 * is a 1-D F32 tensor with no row map (Gemma's norm weights stored as {@code 1 + w}: {@code add = -1});
 * {@code zeroRows} rows of zeros come before the source's rows (XLM-RoBERTa's position rows llama.cpp's converter
 * cut, docs/FORMATS.md §7.3), counted in {@code shape[0]} but not in {@code rows}, only for a 2-D tensor with no row
 * map and no {@code add}.
 */
public record HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                       LongUnaryOperator sourceRow, float add, long zeroRows) {

    /** A tensor with no zero rows. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, 0);
    }

    /** A tensor whose HF values are the stored ones. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, 0f);
    }

    /** Elements of this tensor. */
    public long elements() {
        return Shapes.product(shape);
    }

    /** Elements taken from the source (all but the zero rows). */
    public long sourceElements() {
        return zeroRows == 0 ? elements() : elements() / shape[0] * (shape[0] - zeroRows);
    }
}
