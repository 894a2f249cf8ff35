package dev.modelfs.quant.mlx;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I64;

import dev.modelfs.quant.FloatCasts;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * 4-bit MLX codes and scales re-packed, bit for bit, into GGUF blocks (docs/FORMATS.md §7.5):
 * {@link Kind#MXFP4} (32-element groups, E8M0 scale), {@link Kind#NVFP4} (four 16-element groups per
 * block, their E4M3 scales), {@link Kind#Q4_1} (affine groups split into 32-element blocks, {@code d} =
 * scale and {@code m} = bias as f16, exact when the caller checked that they fit).
 *
 * <p>Invariants: {@link #row} writes exactly {@code rowElems / blockElems * blockBytes} bytes and reads only
 * the codes and scales of that row; it allocates nothing.
 */
public final class MlxRepack {
    private MlxRepack() {}

    /** A GGUF block type MLX 4-bit groups re-pack into. */
    public enum Kind {
        MXFP4(MlxMode.MXFP4, 32, 17), NVFP4(MlxMode.NVFP4, 64, 36), Q4_1(MlxMode.AFFINE, 32, 20);

        /** The MLX mode whose codes this block holds. */
        public final MlxMode mode;
        public final int blockElems;
        public final int blockBytes;

        Kind(MlxMode mode, int blockElems, int blockBytes) {
            this.mode = mode;
            this.blockElems = blockElems;
            this.blockBytes = blockBytes;
        }

        /** Bytes of a row of {@code rowElems} elements. */
        public long rowBytes(long rowElems) {
            return rowElems / blockElems * blockBytes;
        }

        /** Whether a 4-bit tensor quantized as {@code q} with rows of {@code rowElems} re-packs into this kind. */
        public boolean fits(MlxQuant q, long rowElems) {
            return q.mode() == mode && q.bits() == 4 && rowElems % blockElems == 0 && rowElems % q.groupSize() == 0;
        }
    }

    /**
     * Re-packs row {@code srcRow} (of {@code rowElems} elements, groups of {@code groupSize}) of {@code data}
     * into {@code kind} blocks at {@code out@at}.
     */
    public static void row(MlxTensorData data, int groupSize, long rowElems, Kind kind, long srcRow, MemorySegment out, long at) {
        long blocks = rowElems / kind.blockElems;
        long firstElem = srcRow * rowElems;
        long codeBase = data.codesOffset() + firstElem / 2;
        long firstGroup = firstElem / groupSize;
        MemorySegment codes = data.codes();
        MemorySegment scales = data.scales();
        long scaleBase = data.scalesOffset();
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
                    long group = firstGroup + b * 32 / groupSize;
                    out.set(I16, o, f16(data.scaleType(), scales, scaleBase, group));
                    out.set(I16, o + 2, f16(data.scaleType(), data.biases(), data.biasesOffset(), group));
                    split16(codes, c, out, o + 4);
                }
            }
        }
    }

    private static short f16(ScaleType type, MemorySegment seg, long base, long index) {
        float v = switch (type) {
            case BF16 -> FloatCasts.bf16ToF32(seg.get(I16, base + 2 * index));
            case F16 -> FloatCasts.f16ToF32(seg.get(I16, base + 2 * index));
            case F32 -> seg.get(F32, base + 4 * index);
            case U8 -> throw new IllegalStateException("affine scales are never U8");
        };
        return Float.floatToFloat16(v);
    }

    /** The low nibble of every byte: {@link Long#expand} spreads 8 packed nibbles into it. */
    private static final long LOW_NIBBLES = 0x0F0F0F0F0F0F0F0FL;

    /**
     * 32 MLX codes (16 bytes, element {@code 2i} in the low nibble of byte {@code i}) to the GGML
     * order: byte {@code j} = {@code code[j] | code[j+16] << 4}. Read as two little-endian longs, nibble
     * {@code k} of the first is {@code code[k]} and of the second {@code code[16+k]}: each output long is
     * eight nibbles of the first spread to byte-low nibbles, or-ed with eight of the second spread to the
     * high ones ({@link Long#expand}, one instruction where the CPU has it).
     */
    private static void split16(MemorySegment src, long at, MemorySegment dst, long to) {
        long a = src.get(I64, at), b = src.get(I64, at + 8);
        dst.set(I64, to, spread(a, b));
        dst.set(I64, to + 8, spread(a >>> 32, b >>> 32));
    }

    /** 16 MLX codes to NVFP4's sub-block order: byte {@code j} = {@code code[j] | code[j+8] << 4}. */
    private static void split8(MemorySegment src, long at, MemorySegment dst, long to) {
        long a = src.get(I64, at);
        dst.set(I64, to, spread(a, a >>> 32));
    }

    /** Eight bytes: byte {@code j} = nibble {@code j} of {@code low} | nibble {@code j} of {@code high} << 4. */
    private static long spread(long low, long high) {
        return Long.expand(low, LOW_NIBBLES) | Long.expand(high, LOW_NIBBLES) << 4;
    }
}
