package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.NarrowingDequant;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxRepack;
import dev.modelfs.quant.mlx.MlxTensorData;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * The units of one converted tensor, for {@link UnitConverted}: a unit is a GGML block, an MLX group, or a
 * whole row of either (when rows are reordered or re-packed). Sources compose: {@link Shifted} applies an
 * {@link ElementFunction} to the f32 units of another source, {@link ColumnBlocks} permutes the column blocks of
 * another source's rows; {@link Filled} reads nothing (a constant). Used in both directions (GGUF → Hugging Face files,
 * safetensors → GGUF) and by every view.
 *
 * <p>Invariants: {@link #write} writes exactly {@code count * outUnitBytes()} bytes and reads only the
 * source units of the output units it writes; without an order, consecutive units are converted as one
 * run with one quant-level call; per call it allocates at most a small view of the tensor's mapped pieces
 * (and, for {@link Shifted} to a narrower type, its f32 values; for {@link ColumnBlocks}, one unit's bytes; for {@link Gathered}, its f32 rows and block
 * scratch, native and freed on return); scratch is per thread
 * ({@link NarrowingDequant}).
 */
public sealed interface UnitSource permits UnitSource.Blocks, UnitSource.MlxGroups, UnitSource.Shifted, UnitSource.Repacked,
        UnitSource.ColumnBlocks, UnitSource.Filled, Gathered {

    /** Bytes of one output unit. */
    long outUnitBytes();

    /** The blobs read, in the order {@link #write} receives them mapped. */
    List<BlobRef> blobs();

    /** Requires {@code units} source units to lie inside their blobs ({@link IllegalArgumentException} naming {@code what}). */
    default void requireUnits(long units, String what) {}

    /**
     * Writes output units {@code [first, first+count)} to the start of {@code dst}: output unit {@code u} is
     * source unit {@code order.applyAsLong(u)}, or {@code u} when {@code order} is null.
     */
    void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst);

    private static long source(LongUnaryOperator order, long u) {
        return order == null ? u : order.applyAsLong(u);
    }

    /** The lowest and highest source unit output units {@code [first, first+count)} read. */
    private static long[] units(long first, long count, LongUnaryOperator order) {
        long lo = first, hi = first + count - 1;
        if (order != null) {
            lo = Long.MAX_VALUE;
            hi = Long.MIN_VALUE;
            for (long u = first; u < first + count; u++) {
                long s = order.applyAsLong(u);
                lo = Math.min(lo, s);
                hi = Math.max(hi, s);
            }
        }
        return new long[] {lo, hi};
    }

    /**
     * A GGML-block or plain-float tensor, {@code blocksPerUnit} blocks per unit at {@code offset}: dequantized
     * or cast to {@code out} (one rounding), or, when {@code copy}, copied as stored ({@code out} is its type).
     */
    record Blocks(BlobRef blob, long offset, long blocksPerUnit, BlockDequantizer deq, OutputType out, boolean copy)
            implements UnitSource {
        /** Converted to {@code out}, never copied. */
        public static Blocks converted(BlobRef blob, long offset, long blocksPerUnit, BlockDequantizer deq, OutputType out) {
            return new Blocks(blob, offset, blocksPerUnit, deq, out, false);
        }

        /** A stored float tensor in units of {@code unitElements}: copied when {@code out} is its own type, else cast. */
        public static Blocks stored(StoredTensor s, long unitElements, OutputType out) {
            BlockDequantizer d = GgmlDequantizers.forType(ElementTypes.ggml(s.dtype()).orElseThrow(
                    () -> new IllegalArgumentException(s.key() + ": dtype " + s.dtype() + " is not a float type")));
            return new Blocks(new BlobRef(s.bytes().blob(), s.bytes().blobSize()), s.bytes().offset(),
                    unitElements / d.blockElements(), d, out, s.dtype() == out.dtype);
        }

        private long unitInBytes() {
            return blocksPerUnit * deq.blockBytes();
        }

        private int unitElements() {
            return Math.toIntExact(blocksPerUnit * deq.blockElements());
        }

        @Override
        public long outUnitBytes() {
            return (long) unitElements() * out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return List.of(blob);
        }

        @Override
        public void requireUnits(long units, String what) {
            if (offset < 0 || Math.addExact(offset, Math.multiplyExact(units, unitInBytes())) > blob.expectedSize()) {
                throw new IllegalArgumentException(what + ": tensor data outside its blob");
            }
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            MemorySegment src = blobs.getFirst();
            long in = unitInBytes();
            long[] units = units(first, count, order);             // the source units read: a failing page faults here
            GuardedPages.touch(src, offset + units[0] * in, offset + (units[1] + 1) * in);
            if (copy) {
                long runs = order == null ? 1 : count;             // without an order: one run of count units
                long perRun = order == null ? count : 1;
                for (long i = 0; i < runs; i++) {
                    MemorySegment.copy(src, offset + source(order, first + i) * in, dst, i * in, perRun * in);
                }
            } else if (order == null) {
                NarrowingDequant.blocks(deq, src, offset + first * in, count * blocksPerUnit, out.format, dst, 0);
            } else {
                int elements = unitElements();
                NarrowingDequant.units((f, n, f32, off) -> {
                    for (long i = 0; i < n; i++) {
                        deq.dequantize(src, offset + source(order, first + f + i) * in, f32, off + i * elements * 4, blocksPerUnit);
                    }
                }, count, elements, out.format, dst, 0);
            }
        }
    }

    /** An MLX-quantized tensor, {@code groupsPerUnit} groups per unit, dequantized to {@code out} (one rounding). */
    record MlxGroups(MlxParts parts, MlxDequantizer deq, long groupsPerUnit, OutputType out) implements UnitSource {
        /** {@code t} in units of {@code unitElements} (whole groups). */
        public static MlxGroups of(LogicalTensor t, long unitElements, OutputType out) {
            return new MlxGroups(new MlxParts(t), MlxDequantizer.of(t.quant()), unitElements / t.quant().groupSize(), out);
        }

        private int unitElements() {
            return Math.toIntExact(groupsPerUnit * parts.t.quant().groupSize());
        }

        @Override
        public long outUnitBytes() {
            return (long) unitElements() * out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return parts.blobs();
        }

        /**
         * With one global scale per expert (docs/FORMATS.md §5.4) the groups are cut where the scale
         * changes; a unit (a group, or a row) never spans two experts.
         */
        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            long per = parts.groupsPerGlobal();
            int elements = unitElements();
            long[] units = units(first, count, order);             // the source units read: a failing page faults here
            parts.touch(blobs, units[0] * groupsPerUnit, (units[1] + 1) * groupsPerUnit);
            if (order == null) {
                long from = first * groupsPerUnit;
                long to = (first + count) * groupsPerUnit;
                for (long g = from; g < to; ) {
                    long n = Math.min(to, (g / per + 1) * per) - g;
                    deq.dequantize(parts.data(blobs, g), g, n, out.format, dst, (g - from) * parts.t.quant().groupSize() * out.bytes);
                    g += n;
                }
                return;
            }
            MlxTensorData whole = per == parts.t.logicalNumel() / parts.t.quant().groupSize() ? parts.data(blobs) : null;
            NarrowingDequant.units((f, n, f32, off) -> {
                for (long i = 0; i < n; i++) {
                    long g = source(order, first + f + i) * groupsPerUnit;
                    deq.dequantize(whole != null ? whole : parts.data(blobs, g), g, groupsPerUnit, f32, off + i * elements * 4);
                }
            }, count, elements, out.format, dst, 0);
        }
    }

    /**
     * The f32 units of {@code f32} with a function applied to every value in f32 ({@link ElementFunction}), then
     * narrowed once to {@code out}. Named for its first use, a constant added ({@link ElementFunction.Add}: the norm
     * weights llama.cpp stores as {@code 1 + w}, Gemma and Qwen3.5, docs/FORMATS.md §7.3, shifted either way); also
     * Qwen3.5's {@code ssm_a = -exp(A_log)} and its inverse. The order, when given, is the inner source's.
     */
    record Shifted(UnitSource f32, ElementFunction fn, OutputType out) implements UnitSource {
        public Shifted {
            boolean f32Units = f32 instanceof Blocks b ? b.out() == OutputType.F32
                    : f32 instanceof MlxGroups m && m.out() == OutputType.F32;
            if (!f32Units || fn == null) {
                throw new IllegalArgumentException("an element function applies to f32 units, not " + f32);
            }
        }

        /** {@code shift} added to every value ({@link ElementFunction.Add}). */
        public Shifted(UnitSource f32, float shift, OutputType out) {
            this(f32, new ElementFunction.Add(shift), out);
        }

        @Override
        public long outUnitBytes() {
            return f32.outUnitBytes() / 4 * out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return f32.blobs();
        }

        @Override
        public void requireUnits(long units, String what) {
            f32.requireUnits(units, what);
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            long n = count * f32.outUnitBytes() / 4;
            MemorySegment values = out == OutputType.F32 ? dst : MemorySegment.ofArray(new float[Math.toIntExact(n)]);
            f32.write(blobs, first, count, order, values);
            for (long i = 0; i < n; i++) {
                values.set(F32, i * 4, fn.apply(values.get(F32, i * 4)));
            }
            if (out != OutputType.F32) {
                out.format.fromF32(values, 0, dst, 0, n);
            }
        }
    }

    /**
     * The units (whole rows) of {@code rows} with their column blocks permuted: each unit's output bytes are
     * {@code blockOrder.length} equal blocks, and output block {@code j} of a unit is block {@code blockOrder[j]} of the
     * same unit of {@code rows} (which, with an order, is source row {@code order(u)}: the row order and the column
     * permutation compose). Bytes are moved after {@code rows} has converted them, so any output type works whose unit
     * splits into whole column blocks: a float type, or GGML blocks that divide a column block. Qwen3.5's
     * {@code ssm_out} columns, one block per V head, grouped ↔ tiled (docs/FORMATS.md §7.3).
     *
     * <p>Invariants: {@code blockOrder} is a permutation of {@code [0, blockOrder.length)} (copied) and
     * {@code rows.outUnitBytes()} is a multiple of its length; a call allocates one unit's bytes of scratch.
     */
    record ColumnBlocks(UnitSource rows, int[] blockOrder) implements UnitSource {
        public ColumnBlocks {
            blockOrder = blockOrder.clone();
            boolean[] seen = new boolean[blockOrder.length];
            for (int b : blockOrder) {
                if (b < 0 || b >= seen.length || seen[b]) {
                    throw new IllegalArgumentException("column block order " + Arrays.toString(blockOrder) + " is not a permutation");
                }
                seen[b] = true;
            }
            if (seen.length == 0 || rows.outUnitBytes() % seen.length != 0) {
                throw new IllegalArgumentException("a unit of " + rows.outUnitBytes() + " bytes does not split into " + seen.length + " column blocks");
            }
        }

        @Override
        public int[] blockOrder() {
            return blockOrder.clone();
        }

        @Override
        public long outUnitBytes() {
            return rows.outUnitBytes();
        }

        @Override
        public List<BlobRef> blobs() {
            return rows.blobs();
        }

        @Override
        public void requireUnits(long units, String what) {
            rows.requireUnits(units, what);
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            rows.write(blobs, first, count, order, dst);
            long unit = rows.outUnitBytes();
            long block = unit / blockOrder.length;
            MemorySegment row = MemorySegment.ofArray(new byte[Math.toIntExact(unit)]);
            for (long i = 0; i < count; i++) {
                MemorySegment out = dst.asSlice(i * unit, unit);
                row.copyFrom(out);
                for (int j = 0; j < blockOrder.length; j++) {
                    MemorySegment.copy(row, blockOrder[j] * block, out, j * block, block);
                }
            }
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ColumnBlocks c && rows.equals(c.rows) && Arrays.equals(blockOrder, c.blockOrder);
        }

        @Override
        public int hashCode() {
            return 31 * rows.hashCode() + Arrays.hashCode(blockOrder);
        }

        @Override
        public String toString() {
            return "ColumnBlocks[" + rows + ", " + Arrays.toString(blockOrder) + "]";
        }
    }

    /** 4-bit MLX rows of {@code rowElems} re-packed bit for bit into {@code kind} GGUF blocks ({@link MlxRepack}). */
    record Repacked(MlxParts parts, long rowElems, MlxRepack.Kind kind) implements UnitSource {
        public Repacked {
            if (!kind.fits(parts.t.quant(), rowElems)) {
                throw new IllegalArgumentException(parts.t.name() + ": cannot re-pack " + parts.t.quant().canonicalName() + " as " + kind);
            }
        }

        @Override
        public long outUnitBytes() {
            return kind.rowBytes(rowElems);
        }

        @Override
        public List<BlobRef> blobs() {
            return parts.blobs();
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            MlxTensorData data = parts.data(blobs);
            int g = parts.t.quant().groupSize();
            long[] rows = units(first, count, order);
            parts.touch(blobs, rows[0] * (rowElems / g), (rows[1] + 1) * (rowElems / g));
            for (long i = 0; i < count; i++) {
                MlxRepack.row(data, g, rowElems, kind, source(order, first + i), dst, i * outUnitBytes());
            }
        }
    }

    /**
     * One value, {@code value} rounded once to {@code out}, in every element: units of one element, no blob read. A tensor the
     * source file lacks but the target format's loader expects, whose missing value the runtimes agree on (Gemma 4's
     * {@code router.per_expert_scale} of ones, docs/FORMATS.md §7.3).
     */
    record Filled(float value, OutputType out) implements UnitSource {
        @Override
        public long outUnitBytes() {
            return out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return List.of();
        }

        /** Writes {@code count} copies of the value; {@code order} is irrelevant (every unit is the same). */
        @Override
        public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
            MemorySegment one = MemorySegment.ofArray(new float[] {value});
            MemorySegment unit = MemorySegment.ofArray(new byte[out.bytes]);
            out.format.fromF32(one, 0, unit, 0, 1);
            for (long i = 0; i < count; i++) {
                MemorySegment.copy(unit, 0, dst, i * out.bytes, out.bytes);
            }
        }
    }
}
