package dev.modelfs.convert;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.FloatCasts;
import dev.modelfs.quant.NarrowingDequant;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.quant.mlx.MlxDequantizer;
import dev.modelfs.quant.mlx.MlxMode;
import dev.modelfs.quant.mlx.MlxTensorData;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * The rows of one source tensor written in a GGUF type, for {@link RowConverted}. A row is the last
 * safetensors axis ({@code ne[0]} in GGUF), which is also the axis MLX quantizes along, so every
 * quantized row is whole groups and every output row whole GGUF blocks.
 *
 * <p>Invariants: {@link #write} writes exactly {@code count * outRowBytes()} bytes and reads only
 * the source rows of the output rows it writes; per call it allocates at most the small view of the
 * tensor's mapped pieces (scratch is per thread, in {@link NarrowingDequant}), whatever the permutation.
 * Re-packing sources (MXFP4, NVFP4, Q4_1) copy codes and scales bit for bit (docs/FORMATS.md §7.5).
 */
public sealed interface RowSource permits RowSource.Plain, RowSource.MlxRows, RowSource.Repack, RowSource.Shifted {
    ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Bytes of one output row. */
    long outRowBytes();

    /** The blobs read, in the order {@link #write} receives them mapped. */
    List<BlobRef> blobs();

    /**
     * Writes output rows {@code [first, first+count)} to the start of {@code dst}; output row {@code r}
     * is source row {@code r}, or {@code permutation.hfRowOf(r)} when a permutation is given.
     */
    void write(List<MemorySegment> blobs, long first, long count, QkPermutation permutation, MemorySegment dst);

    /** The source row of output row {@code r}. */
    public static long sourceRow(QkPermutation permutation, long r) {
        return permutation == null ? r : permutation.hfRowOf((int) r);
    }

    /** An unquantized float tensor: copied when {@code out} is its own type, else cast (one rounding). */
    record Plain(StoredTensor s, long rowElems, OutputType out, BlockDequantizer deq, int inBytes) implements RowSource {
        public static Plain of(StoredTensor s, long rowElems, OutputType out) {
            BlockDequantizer d = GgmlDequantizers.forType(ElementTypes.ggml(s.dtype()).orElseThrow(
                    () -> new IllegalArgumentException(s.key() + ": dtype " + s.dtype() + " is not a float type")));
            return new Plain(s, rowElems, out, d, d.blockBytes());
        }

        @Override
        public long outRowBytes() {
            return rowElems * out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return List.of(new BlobRef(s.bytes().blob(), s.bytes().blobSize()));
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, QkPermutation permutation, MemorySegment dst) {
            MemorySegment src = blobs.getFirst();
            long rowIn = rowElems * inBytes;
            long runs = permutation == null ? 1 : count;          // without a permutation: one run of count rows
            long rowsPerRun = permutation == null ? count : 1;
            if (s.dtype() == out.dtype) {
                for (long i = 0; i < runs; i++) {
                    MemorySegment.copy(src, s.bytes().offset() + sourceRow(permutation, first + i) * rowIn, dst, i * rowIn, rowsPerRun * rowIn);
                }
                return;
            }
            long rowBlocks = rowElems / deq.blockElements();
            NarrowingDequant.units((f, n, f32, off) -> {
                for (long i = 0; i < n; i++) {
                    deq.dequantize(src, s.bytes().offset() + sourceRow(permutation, first + f + i) * rowIn, f32, off + i * rowElems * 4, rowBlocks);
                }
            }, count, Math.toIntExact(rowElems), out.format, dst, 0);
        }
    }

    /**
     * An F32 source plus a constant, added in f32 (Gemma's norm weights, which llama.cpp stores as
     * {@code 1 + w}, docs/FORMATS.md §7.3). {@code inner} writes F32.
     */
    record Shifted(RowSource inner, float shift) implements RowSource {
        @Override
        public long outRowBytes() {
            return inner.outRowBytes();
        }

        @Override
        public List<BlobRef> blobs() {
            return inner.blobs();
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, QkPermutation permutation, MemorySegment dst) {
            inner.write(blobs, first, count, permutation, dst);
            long n = count * outRowBytes() / 4;
            for (long i = 0; i < n; i++) {
                dst.set(F32, i * 4, dst.get(F32, i * 4) + shift);
            }
        }
    }

    /** An MLX-quantized tensor dequantized to {@code out} (one rounding). */
    record MlxRows(MlxParts parts, MlxDequantizer deq, long groupsPerRow, OutputType out) implements RowSource {
        public static MlxRows of(LogicalTensor t, long rowElems, OutputType out) {
            return new MlxRows(new MlxParts(t), MlxDequantizer.of(t.quant()), rowElems / t.quant().groupSize(), out);
        }

        @Override
        public long outRowBytes() {
            return groupsPerRow * parts.t.quant().groupSize() * out.bytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return parts.blobs();
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, QkPermutation permutation, MemorySegment dst) {
            long rowElems = groupsPerRow * parts.t.quant().groupSize();
            MlxTensorData data = parts.data(blobs);
            NarrowingDequant.units((f, n, f32, off) -> {
                for (long i = 0; i < n; i++) {
                    deq.dequantize(data, sourceRow(permutation, first + f + i) * groupsPerRow, groupsPerRow, f32, off + i * rowElems * 4);
                }
            }, count, Math.toIntExact(rowElems), out.format, dst, 0);
        }
    }

    /**
     * A 4-bit MLX tensor re-packed into GGUF blocks: {@code MXFP4} (32-element groups, E8M0 scale),
     * {@code NVFP4} (four 16-element groups per block, their E4M3 scales), {@code Q4_1} (affine groups
     * split into 32-element blocks, {@code d} = scale and {@code m} = bias as f16, exact by the
     * planner's check).
     */
    record Repack(MlxParts parts, long rowElems, Kind kind) implements RowSource {
        /** The GGUF block type. */
        public enum Kind {
            MXFP4(32, 17), NVFP4(64, 36), Q4_1(32, 20);

            final int blockElems;
            final int blockBytes;

            Kind(int blockElems, int blockBytes) {
                this.blockElems = blockElems;
                this.blockBytes = blockBytes;
            }
        }

        public Repack {
            MlxMode want = switch (kind) {
                case MXFP4 -> MlxMode.MXFP4;
                case NVFP4 -> MlxMode.NVFP4;
                case Q4_1 -> MlxMode.AFFINE;
            };
            if (parts.t.quant().mode() != want || parts.t.quant().bits() != 4 || rowElems % kind.blockElems != 0
                    || rowElems % parts.t.quant().groupSize() != 0) {
                throw new IllegalArgumentException(parts.t.name() + ": cannot re-pack " + parts.t.quant().canonicalName() + " as " + kind);
            }
        }

        @Override
        public long outRowBytes() {
            return rowElems / kind.blockElems * kind.blockBytes;
        }

        @Override
        public List<BlobRef> blobs() {
            return parts.blobs();
        }

        @Override
        public void write(List<MemorySegment> blobs, long first, long count, QkPermutation permutation, MemorySegment dst) {
            for (long i = 0; i < count; i++) {
                row(blobs, sourceRow(permutation, first + i), dst, i * outRowBytes());
            }
        }

        /** Re-packs source row {@code srcRow} into {@code out@at}. */
        private void row(List<MemorySegment> blobs, long srcRow, MemorySegment out, long at) {
            MemorySegment codes = blobs.get(parts.codesIdx);
            MemorySegment scales = blobs.get(parts.scalesIdx);
            int g = parts.t.quant().groupSize();
            long blocks = rowElems / kind.blockElems;
            long firstElem = srcRow * rowElems;
            long codeBase = parts.t.main().bytes().offset() + firstElem / 2;
            long firstGroup = firstElem / g;
            long scaleBase = parts.t.scale().bytes().offset();
            for (long b = 0; b < blocks; b++) {
                long o = at + b * kind.blockBytes;
                long c = codeBase + b * kind.blockElems / 2;
                switch (kind) {
                    case MXFP4 -> {
                        out.set(ValueLayout.JAVA_BYTE, o, scales.get(ValueLayout.JAVA_BYTE, scaleBase + firstGroup + b));
                        split16(codes, c, out, o + 1);
                    }
                    case NVFP4 -> {
                        MemorySegment.copy(scales, scaleBase + firstGroup + 4 * b, out, o, 4);
                        for (int s = 0; s < 4; s++) {
                            split8(codes, c + 8 * s, out, o + 4 + 8 * s);
                        }
                    }
                    case Q4_1 -> {
                        long group = firstGroup + b * 32 / g;
                        out.set(U16, o, f16(scales, scaleBase, group));
                        out.set(U16, o + 2, f16(blobs.get(parts.biasesIdx), parts.t.bias().bytes().offset(), group));
                        split16(codes, c, out, o + 4);
                    }
                }
            }
        }

        private short f16(MemorySegment seg, long base, long index) {
            float v = switch (parts.scaleType) {
                case BF16 -> FloatCasts.bf16ToF32(seg.get(U16, base + 2 * index));
                case F16 -> FloatCasts.f16ToF32(seg.get(U16, base + 2 * index));
                case F32 -> seg.get(F32, base + 4 * index);
                case U8 -> throw new IllegalStateException("affine scales are never U8");
            };
            return Float.floatToFloat16(v);
        }

        /**
         * 32 MLX codes (16 bytes, element {@code 2i} in the low nibble of byte {@code i}) to the GGML
         * order: byte {@code j} = {@code code[j] | code[j+16] << 4}.
         */
        private static void split16(MemorySegment src, long at, MemorySegment dst, long to) {
            for (int j = 0; j < 16; j++) {
                dst.set(ValueLayout.JAVA_BYTE, to + j, (byte) (nibble(src, at, j) | nibble(src, at, j + 16) << 4));
            }
        }

        /** 16 MLX codes to NVFP4's sub-block order: byte {@code j} = {@code code[j] | code[j+8] << 4}. */
        private static void split8(MemorySegment src, long at, MemorySegment dst, long to) {
            for (int j = 0; j < 8; j++) {
                dst.set(ValueLayout.JAVA_BYTE, to + j, (byte) (nibble(src, at, j) | nibble(src, at, j + 8) << 4));
            }
        }

        private static int nibble(MemorySegment src, long at, int k) {
            int b = src.get(ValueLayout.JAVA_BYTE, at + (k >> 1)) & 0xFF;
            return (k & 1) == 0 ? b & 0xF : b >>> 4;
        }
    }

    /** The output type of GGUF float type {@code t}. */
    public static OutputType outputOf(dev.modelfs.format.gguf.GgmlType t) {
        for (OutputType o : OutputType.values()) {
            if (o.ggml == t) {
                return o;
            }
        }
        throw new IllegalArgumentException(t + " is not a float output type");
    }
}
