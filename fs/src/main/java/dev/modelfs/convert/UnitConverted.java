package dev.modelfs.convert;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ConvertedData;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.BlockDequantizer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A converted tensor: {@code units} units of a {@link UnitSource} (dequantized, cast, shifted or re-packed),
 * in source order or reordered ({@code order}: the llama q/k row permutation, docs/FORMATS.md §7.2). The
 * one kind of converted tensor data, for every view and both directions.
 *
 * <p>Invariants: output length {@code units * source.outUnitBytes()}; a chunk is {@code unitsPerChunk}
 * whole units (about {@value ConvertedData#CHUNK_TARGET} output bytes, at least one unit), so it reads
 * exactly the source units under it; the source units lie inside their blobs (checked at construction).
 */
public final class UnitConverted extends ConvertedData {
    private final UnitSource source;
    private final long units;
    private final LongUnaryOperator order;
    /** A complete description of {@link #order} (the on-disk identity of reordered data), or null: none. */
    private final String orderIdentity;
    private final long unitsPerChunk;
    /**
     * {@link #length()} and {@link #chunkBytes()}, computed once: every read asks for them, and the call of
     * {@link UnitSource#outUnitBytes()} they made (an interface with a dozen implementations) was deoptimized on a
     * fresh mount's first read each time the reader met a kind of source the warm-up had not, recompiling the read
     * path while the client waited (BENCHMARKS.md "Converted reads: CPU per GiB (stop 42)").
     */
    private final long length;
    private final long chunkBytes;
    /** The description, or its prefix when {@link #detail} or {@link #to} is set (kept apart so that no string is built per tensor). */
    private final String what;
    /** Appended to {@link #what} after a space (a shared string such as a type's name); null: none. */
    private final String detail;
    /** Appended to {@link #what} as {@code " -> DTYPE"} by {@link #describe()}; null: {@code what} is whole. */
    private final OutputType to;

    /**
     * @param order output unit {@code u} is source unit {@code order.applyAsLong(u)} (a permutation of
     *              {@code [0, units)}, or a strided selection of source units the caller has checked lie in the
     *              blob: a temporal slice, docs/FORMATS.md §12.8); null: in order
     */
    public UnitConverted(UnitSource source, long units, LongUnaryOperator order, String what) {
        this(source, units, order, null, what, null, null);
    }

    /**
     * The same, {@code orderIdentity} describing {@code order} completely (its every row follows from the text, e.g.
     * {@code "qk-permutation heads 4 rows 256 hf->gguf"}), so that reordered data too has an {@link #identity()} and
     * its chunks and files go to the on-disk cache; null: none (then reordered data never goes there).
     */
    public UnitConverted(UnitSource source, long units, LongUnaryOperator order, String orderIdentity, String what) {
        this(source, units, order, orderIdentity, what, null, null);
    }

    /**
     * {@code what} (shared, e.g. the tensor's name) described as {@code what detail -> to}, or built from the
     * source when null.
     */
    private UnitConverted(UnitSource source, long units, LongUnaryOperator order, String orderIdentity, String what, String detail,
                          OutputType to) {
        source.requireUnits(units, what == null ? "converted data" : what);
        this.source = source;
        this.units = units;
        this.order = order;
        this.orderIdentity = orderIdentity;
        this.unitsPerChunk = Math.max(1, CHUNK_TARGET / source.outUnitBytes());
        this.chunkBytes = unitsPerChunk * source.outUnitBytes();
        this.what = what;
        this.detail = detail;
        this.to = to;
        this.length = Math.multiplyExact(units, source.outUnitBytes());       // the length fits
    }

    /** {@code blocks} GGML blocks (or plain floats) of {@code deq} at {@code blob@offset}, converted to {@code out}. */
    public static UnitConverted blocks(BlobRef blob, long offset, long blocks, BlockDequantizer deq, OutputType out, String what) {
        return blocks(blob, offset, blocks, deq, out, what, null);
    }

    /** The same, described as {@code what detail -> out} ({@code detail}: e.g. the source type's name, or null). */
    public static UnitConverted blocks(BlobRef blob, long offset, long blocks, BlockDequantizer deq, OutputType out, String what,
                                       String detail) {
        return new UnitConverted(UnitSource.Blocks.converted(blob, offset, 1, deq, out), blocks, null, null, what, detail, out);
    }

    /** An MLX-quantized tensor dequantized to {@code out}, group by group. */
    public static UnitConverted mlx(LogicalTensor t, OutputType out) {
        int g = t.quant().groupSize();
        return new UnitConverted(UnitSource.MlxGroups.of(t, g, out), t.logicalNumel() / g, null, null, null, null, out);
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public long chunkBytes() {
        return chunkBytes;
    }

    @Override
    public List<BlobRef> blobs() {
        return source.blobs();
    }

    @Override
    public void compute(long chunk, List<MemorySegment> blobs, MemorySegment dst) {
        long first = chunk * unitsPerChunk;
        source.write(blobs, first, Math.min(unitsPerChunk, units - first), order, dst);
    }

    @Override
    public String describe() {
        if (what == null && source instanceof UnitSource.MlxGroups m) {
            LogicalTensor t = m.parts().t;
            return t.name() + " " + t.quant().canonicalName() + " g" + t.quant().groupSize() + " -> " + to.dtype;
        }
        String d = detail == null ? what : what + " " + detail;
        return to == null ? d : d + " -> " + to.dtype;
    }

    /**
     * GGML blocks, MLX groups and MLX rows re-packed into GGML blocks have an identity (the on-disk chunk cache), and so
     * have such rows with their column blocks permuted; in another order only with a description of it
     * ({@link #orderIdentity}); shifted and gathered data have none.
     */
    @Override
    protected String identity() {
        String base = baseIdentity(source);
        if (order == null || base == null) {
            return base;
        }
        return orderIdentity == null ? null : base + " | " + units + " units in order " + orderIdentity;
    }

    /** The identity of {@code source}'s units in source order, or null: none. */
    private static String baseIdentity(UnitSource source) {
        return switch (source) {
            case UnitSource.Blocks b -> "blocks " + b.blob() + " @" + b.offset()
                    + " " + kernelType(b.deq()) + (b.copy() ? " copied" : "") + " -> " + b.out();
            case UnitSource.MlxGroups m -> mlxIdentity(m.parts(), m.out());
            case UnitSource.Shifted sh -> null;
            case UnitSource.Repacked r -> "repacked " + r.kind() + " row " + r.rowElems() + " of " + mlxIdentity(r.parts(), null);
            case UnitSource.ColumnBlocks c -> {
                String rows = baseIdentity(c.rows());
                yield rows == null ? null : rows + " | column blocks " + Arrays.toString(c.blockOrder());
            }
            case UnitSource.Filled f -> null;
            case Gathered g -> null;
        };
    }

    private static String mlxIdentity(MlxParts parts, OutputType out) {
        StringBuilder b = new StringBuilder("mlx ").append(parts.t.quant()).append(' ').append(parts.t.logicalNumel()).append(" -> ").append(out);
        for (StoredTensor s : new StoredTensor[] {parts.t.main(), parts.t.scale(), parts.t.bias(), parts.t.globalScale()}) {
            b.append(" | ");
            if (s != null) {
                b.append(s.dtype()).append(' ').append(s.bytes());
            }
        }
        return b.toString();
    }

    /** A kernel's type ("GGML Q8_0 dequantizer"): both implementations write the same bytes, so neither is named. */
    private static String kernelType(BlockDequantizer deq) {
        return deq.toString().replace(" (Vector API)", "");
    }

    @Override
    public String kernel() {
        return kernelOf(source);
    }

    private static String kernelOf(UnitSource s) {
        return switch (s) {
            case UnitSource.Blocks b -> b.copy() ? null : b.deq() + " -> " + b.out();
            case UnitSource.MlxGroups m -> "MLX " + m.parts().t.quant().mode() + " " + m.parts().t.quant().bits() + "-bit, "
                    + m.parts().scaleType + " scales -> " + m.out();
            case UnitSource.Shifted sh -> kernelOf(sh.f32()) + ", "
                    + (sh.fn() instanceof ElementFunction.Add ? "shifted" : sh.fn().toString()) + " -> " + sh.out();
            case UnitSource.ColumnBlocks c -> kernelOf(c.rows()) + ", column blocks permuted";
            case UnitSource.Repacked r -> "MLX repack " + r.kind() + ", " + r.parts().scaleType + " scales";
            case UnitSource.Filled f -> null;
            case Gathered g -> "gathered " + g.parts().getFirst().sources().getFirst().deq() + " -> " + g.out();
        };
    }
}
