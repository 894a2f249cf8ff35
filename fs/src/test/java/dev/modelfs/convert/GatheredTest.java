package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.quant.BlockDequantizer;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Gathered} against the index formulas of the layouts it rebuilds (docs/FORMATS.md §7.3): gpt-oss's
 * {@code gate_up_proj[e][h][2f + j]} = (gate, up)[j][e][f][h] and its bias, {@code down_proj[e][f][h]} =
 * down[e][h][f], DeepSeek's {@code kv_b_proj} rows per head = k_b[h]ᵀ then v_b[h]; F32 sources (values are
 * their flat index) and Q8_0 ones (value = scale · q, built here byte by byte), chunked like UnitConverted.
 */
class GatheredTest {
    static final BlobRef BLOB = new BlobRef(new Digest("9".repeat(64)), 1 << 20);
    static final BlockDequantizer F32_DEQ = GgmlDequantizers.forType(GgmlType.F32);

    /** An F32 stack at {@code offset} whose flat element k is {@code base + k}. */
    static void f32(MemorySegment blob, long offset, int elements, float base) {
        for (int k = 0; k < elements; k++) {
            blob.set(F32, offset + 4L * k, base + k);
        }
    }

    static MemorySegment blob() {
        return Arena.ofAuto().allocate(BLOB.expectedSize());
    }

    static float[] write(Gathered g, MemorySegment blob, long first, long count) {
        MemorySegment dst = Arena.ofAuto().allocate(count * g.outUnitBytes());
        g.write(List.of(blob), first, count, null, dst);
        float[] out = new float[(int) (count * g.cols())];
        for (int i = 0; i < out.length; i++) {
            out[i] = dst.get(F32, 4L * i);
        }
        return out;
    }

    @Test
    void gptOssGateUpIsGateAndUpTransposedInAlternateColumns() {
        int e = 2, ff = 3, hidden = 4;
        MemorySegment blob = blob();
        f32(blob, 0, e * ff * hidden, 0);            // gate[e][f][h] = (e*ff + f)*hidden + h
        f32(blob, 4096, e * ff * hidden, 1000);      // up: 1000 + the same
        Gathered g = new Gathered(BLOB, e, List.of(new Gathered.Part(List.of(
                new Gathered.Source(0, F32_DEQ, ff, hidden), new Gathered.Source(4096, F32_DEQ, ff, hidden)), true)), OutputType.F32);
        assertEquals(2 * ff, g.cols());
        assertEquals((long) e * hidden, g.units());
        for (long first = 0; first < g.units(); first++) {          // every unit alone, then all at once
            for (long count : new long[] {1, g.units() - first}) {
                float[] out = write(g, blob, first, count);
                for (long u = first; u < first + count; u++) {
                    long ex = u / hidden, h = u % hidden;
                    for (int col = 0; col < 2 * ff; col++) {
                        float want = (col % 2 == 0 ? 0 : 1000) + (ex * ff + col / 2) * hidden + h;
                        assertEquals(want, out[(int) ((u - first) * 2 * ff + col)], "unit " + u + " col " + col);
                    }
                }
            }
        }
    }

    @Test
    void gptOssBiasesAlternateAndDownIsTransposed() {
        int e = 3, ff = 4, hidden = 2;
        MemorySegment blob = blob();
        f32(blob, 0, e * ff, 0);
        f32(blob, 1024, e * ff, 500);
        Gathered bias = new Gathered(BLOB, e, List.of(new Gathered.Part(List.of(
                new Gathered.Source(0, F32_DEQ, ff, 1), new Gathered.Source(1024, F32_DEQ, ff, 1)), true)), OutputType.F32);
        float[] b = write(bias, blob, 0, bias.units());
        assertEquals(e, bias.units());
        for (int ex = 0; ex < e; ex++) {
            for (int col = 0; col < 2 * ff; col++) {
                assertEquals((col % 2 == 0 ? 0 : 500) + ex * ff + col / 2, b[ex * 2 * ff + col]);
            }
        }
        f32(blob, 2048, e * hidden * ff, 0);        // down[e][h][f]
        Gathered down = new Gathered(BLOB, e, List.of(new Gathered.Part(List.of(new Gathered.Source(2048, F32_DEQ, hidden, ff)), true)),
                OutputType.F32);
        float[] d = write(down, blob, 0, down.units());
        for (int ex = 0; ex < e; ex++) {
            for (int f = 0; f < ff; f++) {
                for (int h = 0; h < hidden; h++) {
                    assertEquals((ex * hidden + h) * ff + f, d[(ex * ff + f) * hidden + h]);
                }
            }
        }
    }

    /** Q8_0 blocks (f16 scale, 32 int8) whose flat element k is scale(k / 32) * q(k), q(k) = (k * 7) % 23 - 11. */
    static void q8(MemorySegment blob, long offset, int elements) {
        for (int blk = 0; blk < elements / 32; blk++) {
            long at = offset + 34L * blk;
            blob.set(I16, at, Float.floatToFloat16(0.5f + blk));
            for (int i = 0; i < 32; i++) {
                int k = blk * 32 + i;
                blob.set(ValueLayout.JAVA_BYTE, at + 2 + i, (byte) ((k * 7) % 23 - 11));
            }
        }
    }

    static float q8Value(int k) {
        return (0.5f + k / 32) * ((k * 7) % 23 - 11);
    }

    @Test
    void deepseekKvBIsEachHeadsKbTransposedThenVb() {
        int heads = 2, kvLora = 64, nope = 32, v = 32;
        MemorySegment blob = blob();
        q8(blob, 0, heads * kvLora * nope);                  // k_b[h][l][n], GGUF ne [nope, kv_lora, heads]
        long vOff = 34L * heads * kvLora * nope / 32;
        q8(blob, vOff, heads * v * kvLora);                  // v_b[h][i][l], GGUF ne [kv_lora, v, heads]
        BlockDequantizer q8 = GgmlDequantizers.forType(GgmlType.Q8_0);
        Gathered g = new Gathered(BLOB, heads, List.of(new Gathered.Part(List.of(new Gathered.Source(0, q8, kvLora, nope)), true),
                new Gathered.Part(List.of(new Gathered.Source(vOff, q8, v, kvLora)), false)), OutputType.F32);
        assertEquals(kvLora, g.cols());
        assertEquals((long) heads * (nope + v), g.units());
        for (long first : new long[] {0, 5, 31, 32, 63, 64, 100}) {
            long count = Math.min(g.units() - first, 37);
            float[] out = write(g, blob, first, count);
            for (long u = first; u < first + count; u++) {
                int h = (int) (u / (nope + v)), r = (int) (u % (nope + v));
                for (int l = 0; l < kvLora; l++) {
                    float want = r < nope ? q8Value((h * kvLora + l) * nope + r) : q8Value((h * v + r - nope) * kvLora + l);
                    assertEquals(want, out[(int) ((u - first) * kvLora + l)], "unit " + u + " col " + l);
                }
            }
        }
    }

    @Test
    void narrowsOnceAndRefusesBadGeometry() {
        MemorySegment blob = blob();
        f32(blob, 0, 8, 0.1f);
        Gathered g = new Gathered(BLOB, 1, List.of(new Gathered.Part(List.of(new Gathered.Source(0, F32_DEQ, 2, 4)), true)), OutputType.F16);
        MemorySegment dst = Arena.ofAuto().allocate(g.units() * g.outUnitBytes());
        g.write(List.of(blob), 0, g.units(), null, dst);
        for (int c = 0; c < 4; c++) {
            for (int r = 0; r < 2; r++) {
                assertEquals(Float.floatToFloat16(0.1f + r * 4 + c), dst.get(I16, 2L * (c * 2 + r)));
            }
        }
        assertThrows(IllegalArgumentException.class, () -> g.write(List.of(blob), 0, 1, u -> u, dst));
        assertThrows(IllegalArgumentException.class, () -> g.requireUnits(3, "t"));
        Gathered outside = new Gathered(new BlobRef(BLOB.digest(), 16), 1,
                List.of(new Gathered.Part(List.of(new Gathered.Source(0, F32_DEQ, 2, 4)), false)), OutputType.F32);
        assertThrows(IllegalArgumentException.class, () -> outside.requireUnits(2, "t"));
        assertThrows(IllegalArgumentException.class, () -> new Gathered(BLOB, 1, List.of(
                new Gathered.Part(List.of(new Gathered.Source(0, F32_DEQ, 2, 4)), true),
                new Gathered.Part(List.of(new Gathered.Source(0, F32_DEQ, 2, 4)), false)), OutputType.F32));
        assertThrows(IllegalArgumentException.class, () -> new Gathered.Part(List.of(
                new Gathered.Source(0, F32_DEQ, 2, 4), new Gathered.Source(64, F32_DEQ, 4, 2)), false));
    }
}
