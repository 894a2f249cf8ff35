package dev.modelfs.hf;

import dev.modelfs.arch.ElementMap;
import dev.modelfs.arch.HfLayout;
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
 * is a 1-D F32 tensor with no row map (Gemma's norm weights stored as {@code 1 + w}: {@code add = -1});
 * {@code zeroRows} rows of zeros come before the source's rows (XLM-RoBERTa's position rows llama.cpp's converter
 * cut, docs/FORMATS.md §7.3), counted in {@code shape[0]} but not in {@code rows}, only for a 2-D tensor with no row
 * map and no {@code add}. {@code assembled}, when not null, says how the values are gathered from several GGUF
 * tensors instead ({@link Assembled}; {@code source} is then its first tensor, {@code sourceRow} null, {@code add}
 * and {@code zeroRows} 0). {@code columnBlocks}, when not null, permutes equal column blocks of every row (HF block
 * {@code j} is source block {@code columnBlocks[j]}) and {@code values} is a function of every stored value (Qwen 3.5's
 * gated delta-net, {@link HfLayout}); both only for a whole GGUF tensor with {@code add} and {@code zeroRows} 0.
 * {@code fill}, when not null, is every value of a tensor the GGUF does not hold ({@link #filled}): nothing of {@code source}
 * is read ({@code byteLength} 0), it only gives the dtype the tensor is written in (as its own tensor would be).
 */
public record HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                       LongUnaryOperator sourceRow, float add, long zeroRows, Assembled assembled, int[] columnBlocks,
                       ElementMap values, Float fill) {

    /** A tensor that is not a constant fill. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add, long zeroRows, Assembled assembled, int[] columnBlocks,
                    ElementMap values) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, zeroRows, assembled, columnBlocks, values, null);
    }

    /**
     * A tensor of {@code shape} whose every value is {@code value}, written in the dtype GGUF tensor {@code dtypeOf} is written
     * in ({@link dev.modelfs.arch.HfConstant}).
     */
    public static HfTensor filled(String name, GgufTensorInfo dtypeOf, long[] shape, float value) {
        return new HfTensor(name, dtypeOf, shape.clone(), 0, 0, dev.modelfs.format.Shapes.product(shape), null, 0f, 0L, null, null,
                ElementMap.NONE, value);
    }

    /** A tensor with no column permutation and no element function. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add, long zeroRows, Assembled assembled) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, zeroRows, assembled, null, ElementMap.NONE);
    }

    /** The whole of GGUF tensor {@code source} laid out as an architecture says ({@link HfLayout}). */
    public static HfTensor of(HfLayout l, GgufTensorInfo source) {
        return new HfTensor(l.hfName(), source, l.shape(), 0, source.byteSize(), l.rows(), l.rowOrder(), 0f, 0L, null,
                l.columnBlocks(), l.values());
    }

    /** A tensor with zero rows first, not assembled. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add, long zeroRows) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, zeroRows, null);
    }

    /** A tensor whose HF values are the stored ones. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, 0f);
    }

    /** A slice of one GGUF tensor, {@code add} added to every value, no zero rows. */
    public HfTensor(String name, GgufTensorInfo source, long[] shape, long byteOffset, long byteLength, long rows,
                    LongUnaryOperator sourceRow, float add) {
        this(name, source, shape, byteOffset, byteLength, rows, sourceRow, add, 0L, null);
    }

    /**
     * Values gathered from stacked GGUF tensors ({@code dev.modelfs.arch.Assembly}, docs/FORMATS.md §7.3): per batch,
     * the rows of each part in turn, a part being its tensors' rows interleaved, transposed or not.
     */
    public record Assembled(long batches, List<Part> parts) {
        public Assembled {
            parts = List.copyOf(parts);
        }

        /** GGUF tensors of one geometry ({@link #geometry}) whose rows are interleaved, then transposed or not. */
        public record Part(List<GgufTensorInfo> sources, boolean transposed) {
            public Part {
                sources = List.copyOf(sources);
            }
        }

        /**
         * {@code [batches, rows, cols]} of a GGUF tensor seen as a stack of matrices: {@code ne = [cols, rows, batches]};
         * a 2-D tensor is {@code ne[1]} batches of {@code ne[0]} one-element rows, a 1-D one a single batch of them.
         */
        public static long[] geometry(GgufTensorInfo t) {
            long[] ne = t.ne();
            return switch (t.rank()) {
                case 1 -> new long[] {1, ne[0], 1};
                case 2 -> new long[] {ne[1], ne[0], 1};
                case 3 -> new long[] {ne[2], ne[1], ne[0]};
                default -> throw new HfUnsupported("GGUF tensor " + t.name() + " has " + t.rank() + " dimensions");
            };
        }
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
