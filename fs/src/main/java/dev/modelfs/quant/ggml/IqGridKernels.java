package dev.modelfs.quant.ggml;

import static dev.modelfs.format.LittleEndian.I32;
import static dev.modelfs.quant.ggml.Le.f16;
import static dev.modelfs.quant.ggml.Le.put;
import static dev.modelfs.quant.ggml.Le.u16;
import static dev.modelfs.quant.ggml.Le.u8;

import dev.modelfs.format.gguf.GgmlType;
import java.lang.foreign.MemorySegment;

/**
 * The lattice ("grid") IQ types: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, written after
 * ggml-quants.c {@code dequantize_row_iq*} with the tables of {@link GgmlIqTables}. Like ggml, the sign
 * is applied by multiplying with ±1.0f after {@code db * grid[j]}.
 */
final class IqGridKernels {
    private IqGridKernels() {}

    static final GgmlKernel IQ2_XXS_K = new IQ2_XXS();
    static final GgmlKernel IQ2_XS_K = new IQ2_XS();
    static final GgmlKernel IQ2_S_K = new IQ2_S();
    static final GgmlKernel IQ3_XXS_K = new IQ3_XXS();
    static final GgmlKernel IQ3_S_K = new IQ3_S();
    static final GgmlKernel IQ1_S_K = new IQ1_S();
    static final GgmlKernel IQ1_M_K = new IQ1_M();

    private static final int[] KSIGNS = GgmlIqTables.KSIGNS_IQ2XS;

    /** Unsigned byte j of a packed grid entry. */
    private static int gb(long entry, int j) {
        return (int) (entry >>> (8 * j)) & 0xFF;
    }

    /** 8 outputs {@code db * grid[j] * (signs bit j ? -1 : 1)} at {@code y}. */
    private static void grid8(MemorySegment dst, long y, float db, long grid, int signs) {
        for (int j = 0; j < 8; j++) {
            put(dst, y + 4 * j, db * gb(grid, j) * ((signs & (1 << j)) != 0 ? -1.0f : 1.0f));
        }
    }

    /** IQ2_XXS (256, 66 B): {@code d @0, qs[32]:u16 @2}; per 32 elements two u32 words (aux8 indices, signs+scale). */
    static final class IQ2_XXS extends GgmlKernel {
        IQ2_XXS() {
            super(GgmlType.IQ2_XXS);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long[] grid = GgmlIqTables.Iq2xxs.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 66 * blk, 66);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib32 = 0; ib32 < 8; ib32++) {
                    final int aux0 = in.get(I32, 2 + 8 * ib32);
                    final int aux1 = in.get(I32, 6 + 8 * ib32);
                    final float db = d * (0.5f + (aux1 >>> 28)) * 0.25f;
                    for (int l = 0; l < 4; l++) {
                        final int idx = (aux0 >>> (8 * l)) & 0xFF;
                        final int signs = KSIGNS[(aux1 >>> (7 * l)) & 127];
                        grid8(dst, ob + 4 * (32 * ib32 + 8 * l), db, grid[idx], signs);
                    }
                }
            }
        }
    }

    /** IQ2_XS (256, 74 B): {@code d @0, qs[32]:u16 @2, scales[8] @66}; index = qs & 511, signs = ksigns[qs >> 9]. */
    static final class IQ2_XS extends GgmlKernel {
        IQ2_XS() {
            super(GgmlType.IQ2_XS);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long[] grid = GgmlIqTables.Iq2xs.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 74 * blk, 74);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib32 = 0; ib32 < 8; ib32++) {
                    final int sc = u8(in, 66 + ib32);
                    final float db0 = d * (0.5f + (sc & 0xF)) * 0.25f;
                    final float db1 = d * (0.5f + (sc >>> 4)) * 0.25f;
                    for (int l = 0; l < 4; l++) {
                        final int q = u16(in, 2 + 2 * (4 * ib32 + l));
                        grid8(dst, ob + 4 * (32 * ib32 + 8 * l), l < 2 ? db0 : db1, grid[q & 511], KSIGNS[q >>> 9]);
                    }
                }
            }
        }
    }

    /**
     * IQ2_S (256, 82 B): {@code d @0, qs[64] @2 (32 index bytes, then 32 sign bytes), qh[8] @66,
     * scales[8] @74}; index = {@code qs[l] | (qh[ib32] << (8-2l) & 0x300)}.
     */
    static final class IQ2_S extends GgmlKernel {
        IQ2_S() {
            super(GgmlType.IQ2_S);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long[] grid = GgmlIqTables.Iq2s.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 82 * blk, 82);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib32 = 0; ib32 < 8; ib32++) {
                    final int sc = u8(in, 74 + ib32);
                    final float db0 = d * (0.5f + (sc & 0xF)) * 0.25f;
                    final float db1 = d * (0.5f + (sc >>> 4)) * 0.25f;
                    final int qh = u8(in, 66 + ib32);
                    for (int l = 0; l < 4; l++) {
                        final int idx = u8(in, 2 + 4 * ib32 + l) | ((qh << (8 - 2 * l)) & 0x300);
                        final int signs = u8(in, 34 + 4 * ib32 + l);
                        grid8(dst, ob + 4 * (32 * ib32 + 8 * l), l < 2 ? db0 : db1, grid[idx], signs);
                    }
                }
            }
        }
    }

    /** 4 outputs {@code db * grid[j] * (signs bit (j + shift) ? -1 : 1)} at {@code y}. */
    private static void grid4(MemorySegment dst, long y, float db, int grid, int signs, int shift) {
        for (int j = 0; j < 4; j++) {
            final int g = (grid >>> (8 * j)) & 0xFF;
            put(dst, y + 4 * j, db * g * ((signs & (1 << (j + shift))) != 0 ? -1.0f : 1.0f));
        }
    }

    /** IQ3_XXS (256, 98 B): {@code d @0, qs[64] @2 (grid indices), scales_and_signs[32] @66 (8 u32)}. */
    static final class IQ3_XXS extends GgmlKernel {
        IQ3_XXS() {
            super(GgmlType.IQ3_XXS);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] grid = GgmlIqTables.Iq3xxs.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 98 * blk, 98);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib32 = 0; ib32 < 8; ib32++) {
                    final int aux = in.get(I32, 66 + 4 * ib32);
                    final float db = d * (0.5f + (aux >>> 28)) * 0.5f;
                    final long qs = 2 + 8 * ib32;
                    for (int l = 0; l < 4; l++) {
                        final int signs = KSIGNS[(aux >>> (7 * l)) & 127];
                        final long y = ob + 4 * (32 * ib32 + 8 * l);
                        grid4(dst, y, db, grid[u8(in, qs + 2 * l)], signs, 0);
                        grid4(dst, y + 16, db, grid[u8(in, qs + 2 * l + 1)], signs, 4);
                    }
                }
            }
        }
    }

    /**
     * IQ3_S (256, 110 B): {@code d @0, qs[64] @2, qh[8] @66, signs[32] @74, scales[4] @106};
     * {@code db = d * (1 + 2*scale)}; index = {@code qs | (qh bit << 8)}.
     */
    static final class IQ3_S extends GgmlKernel {
        IQ3_S() {
            super(GgmlType.IQ3_S);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final int[] grid = GgmlIqTables.Iq3s.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 110 * blk, 110);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib32 = 0; ib32 < 8; ib32++) { // ggml's pairs (ib32, ib32+1) unrolled into one loop
                    final int sc = u8(in, 106 + ib32 / 2);
                    final float db = d * (1 + 2 * ((ib32 & 1) == 0 ? sc & 0xF : sc >>> 4));
                    final int qh = u8(in, 66 + ib32);
                    final long qs = 2 + 8 * ib32;
                    final long sg = 74 + 4 * ib32;
                    for (int l = 0; l < 4; l++) {
                        final int i1 = u8(in, qs + 2 * l) | ((qh << (8 - 2 * l)) & 256);
                        final int i2 = u8(in, qs + 2 * l + 1) | ((qh << (7 - 2 * l)) & 256);
                        final int signs = u8(in, sg + l);
                        final long y = ob + 4 * (32 * ib32 + 8 * l);
                        grid4(dst, y, db, grid[i1], signs, 0);
                        grid4(dst, y + 16, db, grid[i2], signs, 4);
                    }
                }
            }
        }
    }

    /** 8 outputs {@code dl * (grid[j] + delta)} with signed grid bytes (iq1s_grid). */
    private static void grid8Delta(MemorySegment dst, long y, float dl, long grid, float delta) {
        for (int j = 0; j < 8; j++) {
            put(dst, y + 4 * j, dl * ((byte) (grid >>> (8 * j)) + delta));
        }
    }

    /**
     * IQ1_S (256, 50 B): {@code d @0, qs[32] @2, qh[8]:u16 @34}; {@code dl = d * (2*((qh>>12)&7) + 1)},
     * delta = ±IQ1S_DELTA by bit 15, index = {@code qs[l] | ((qh >> 3l) & 7) << 8}.
     */
    static final class IQ1_S extends GgmlKernel {
        IQ1_S() {
            super(GgmlType.IQ1_S);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long[] grid = GgmlIqTables.Iq1s.GRID;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 50 * blk, 50);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final float d = f16(in, 0);
                for (int ib = 0; ib < 8; ib++) {
                    final int qh = u16(in, 34 + 2 * ib);
                    final float dl = d * (2 * ((qh >>> 12) & 7) + 1);
                    final float delta = (qh & 0x8000) != 0 ? -GgmlIqTables.IQ1S_DELTA : GgmlIqTables.IQ1S_DELTA;
                    for (int l = 0; l < 4; l++) {
                        final int idx = u8(in, 2 + 4 * ib + l) | (((qh >>> (3 * l)) & 7) << 8);
                        grid8Delta(dst, ob + 4 * (32 * ib + 8 * l), dl, grid[idx], delta);
                    }
                }
            }
        }
    }

    /**
     * IQ1_M (256, 56 B): {@code qs[32] @0, qh[16] @32, scales[8] @48} (four u16 words whose top nibbles
     * form the f16 super-scale); 3-bit sub-scales, {@code dl = d * (2*sc + 1)}, delta ±IQ1M_DELTA.
     */
    static final class IQ1_M extends GgmlKernel {
        IQ1_M() {
            super(GgmlType.IQ1_M);
        }

        @Override
        void run(MemorySegment src, long s, MemorySegment dst, long o, long n) {
            final long[] grid = GgmlIqTables.Iq1s.GRID;
            final float delta = GgmlIqTables.IQ1M_DELTA;
            for (long blk = 0; blk < n; blk++) {
                final MemorySegment in = src.asSlice(s + 56 * blk, 56);
                final long ob = o + 1024 * blk; // output stays on dst: the helpers below are not always inlined
                final int sc0 = u16(in, 48), sc1 = u16(in, 50);
                final int sc2 = u16(in, 52), sc3 = u16(in, 54);
                final int scaleBits = (sc0 >>> 12) | ((sc1 >>> 8) & 0x00F0) | ((sc2 >>> 4) & 0x0F00) | (sc3 & 0xF000);
                final float d = Float.float16ToFloat((short) scaleBits);
                for (int ib = 0; ib < 8; ib++) {
                    final int sc = u16(in, 48 + 2 * (ib / 2));
                    final int shift = 6 * (ib % 2);
                    final float dl1 = d * (2 * ((sc >>> shift) & 0x7) + 1);
                    final float dl2 = d * (2 * ((sc >>> (shift + 3)) & 0x7) + 1);
                    final int qh0 = u8(in, 32 + 2 * ib);
                    final int qh1 = u8(in, 33 + 2 * ib);
                    final long qs = 4 * ib;
                    final int idx0 = u8(in, qs) | ((qh0 << 8) & 0x700);
                    final int idx1 = u8(in, qs + 1) | ((qh0 << 4) & 0x700);
                    final int idx2 = u8(in, qs + 2) | ((qh1 << 8) & 0x700);
                    final int idx3 = u8(in, qs + 3) | ((qh1 << 4) & 0x700);
                    final long y = 128 * ib;
                    grid8Delta(dst, ob + y, dl1, grid[idx0], (qh0 & 0x08) != 0 ? -delta : delta);
                    grid8Delta(dst, ob + y + 32, dl1, grid[idx1], (qh0 & 0x80) != 0 ? -delta : delta);
                    grid8Delta(dst, ob + y + 64, dl2, grid[idx2], (qh1 & 0x08) != 0 ? -delta : delta);
                    grid8Delta(dst, ob + y + 96, dl2, grid[idx3], (qh1 & 0x80) != 0 ? -delta : delta);
                }
            }
        }
    }
}
