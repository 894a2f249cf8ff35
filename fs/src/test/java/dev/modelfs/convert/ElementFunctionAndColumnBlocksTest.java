package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The two conversions Qwen3.5's gated delta-net needs (docs/FORMATS.md §7.3): an {@link ElementFunction} applied by
 * {@link UnitSource.Shifted} ({@code ssm_a = -exp(A_log)} and back) and {@link UnitSource.ColumnBlocks} (V-head
 * column blocks of {@code ssm_out} permuted), each composed with a row order; expected values are computed here from
 * the formulas with {@link Math} and Java's own half-float conversion.
 */
class ElementFunctionAndColumnBlocksTest {
    private static final Digest BLOB = new Digest("e".repeat(64));

    /** An F32 tensor of {@code rows x cols} whose element {@code k} is {@code value(k)}, and its blob. */
    private record F32Matrix(StoredTensor tensor, MemorySegment blob) {
        static F32Matrix of(int rows, int cols, java.util.function.IntToDoubleFunction value) {
            MemorySegment b = Arena.ofAuto().allocate(4L * rows * cols);
            for (int k = 0; k < rows * cols; k++) {
                b.set(F32, 4L * k, (float) value.applyAsDouble(k));
            }
            return new F32Matrix(new StoredTensor("t", Dtype.F32, new long[] {rows, cols}, new BlobRange(BLOB, b.byteSize(), 0, b.byteSize())), b);
        }

        float at(int k) {
            return blob.get(F32, 4L * k);
        }
    }

    @Test
    void theFunctionsFollowTheirFormulas() {
        for (float x : new float[] {-3.25f, -1f, -0.001f, 0f, 0.5f, 2f, 7.75f}) {
            assertEquals(x - 1f, new ElementFunction.Add(-1f).apply(x));
            assertEquals((float) -Math.exp(x), new ElementFunction.NegExp().apply(x));
            assertTrue(new ElementFunction.NegExp().apply(x) < 0, "-exp(x) is negative");
        }
        assertEquals((float) Math.log(3.25), new ElementFunction.LogOfNeg().apply(-3.25f));
        assertEquals(0f, new ElementFunction.LogOfNeg().apply(-1f));
        assertEquals(Float.NEGATIVE_INFINITY, new ElementFunction.LogOfNeg().apply(-0f));
        assertTrue(Float.isNaN(new ElementFunction.LogOfNeg().apply(2f)), "log of a negative number");
    }

    /** {@code log(-x)} undoes {@code -exp(x)} to within an ulp or two of f32, for A_log values of real models. */
    @Test
    void logOfNegUndoesNegExp() {
        for (int i = -400; i <= 400; i++) {
            float a = i / 100f;
            float back = new ElementFunction.LogOfNeg().apply(new ElementFunction.NegExp().apply(a));
            assertEquals(a, back, 4 * Math.ulp(Math.max(1f, Math.abs(a))), "A_log " + a);
        }
    }

    /** Rows in reverse order, {@code log(-x)} applied, narrowed once to F16. */
    @Test
    void anElementFunctionAppliesToReorderedRowsBeforeTheNarrowing() {
        int rows = 4, cols = 3;
        F32Matrix m = F32Matrix.of(rows, cols, k -> -Math.exp((k - 6) / 5.0));
        var src = new UnitSource.Shifted(UnitSource.Blocks.stored(m.tensor(), cols, OutputType.F32), new ElementFunction.LogOfNeg(), OutputType.F16);
        assertEquals(2L * cols, src.outUnitBytes());
        UnitConverted c = new UnitConverted(src, rows, u -> rows - 1 - u, "ssm_a");
        MemorySegment dst = Arena.ofAuto().allocate(c.length());
        c.compute(0, List.of(m.blob()), dst);
        for (int r = 0; r < rows; r++) {
            for (int col = 0; col < cols; col++) {
                int k = (rows - 1 - r) * cols + col;
                short expected = Float.floatToFloat16((float) Math.log(-(double) m.at(k)));
                assertEquals(expected, dst.get(I16, 2L * (r * cols + col)), "row " + r + " col " + col);
            }
        }
    }

    @Test
    void theFloatShiftIsAnAdd() {
        F32Matrix m = F32Matrix.of(1, 2, k -> k);
        var s = new UnitSource.Shifted(UnitSource.Blocks.stored(m.tensor(), 2, OutputType.F32), -1f, OutputType.F32);
        assertEquals(new ElementFunction.Add(-1f), s.fn());
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.Shifted(UnitSource.Blocks.stored(m.tensor(), 2, OutputType.F32), null, OutputType.F32));
    }

    /**
     * A 5 x 6 matrix in blocks of 2 columns, block order {2, 0, 1}, rows in the order {3, 0, 4, 1, 2}: output
     * element (r, 2j + e) is source element (order(r), 2 * blockOrder[j] + e), as F32 and as F16.
     */
    @Test
    void columnBlocksArePermutedWithinEachReorderedRow() {
        int rows = 5, cols = 6, block = 2;
        int[] blockOrder = {2, 0, 1};
        long[] rowOrder = {3, 0, 4, 1, 2};
        F32Matrix m = F32Matrix.of(rows, cols, k -> k * 0.25 - 3);
        for (OutputType out : List.of(OutputType.F32, OutputType.F16)) {
            var src = new UnitSource.ColumnBlocks(UnitSource.Blocks.stored(m.tensor(), cols, out), blockOrder);
            UnitConverted c = new UnitConverted(src, rows, u -> rowOrder[(int) u], "rows 3,0,4,1,2", "ssm_out");
            MemorySegment dst = Arena.ofAuto().allocate(c.length());
            c.compute(0, List.of(m.blob()), dst);
            for (int r = 0; r < rows; r++) {
                for (int j = 0; j < cols / block; j++) {
                    for (int e = 0; e < block; e++) {
                        float expected = m.at((int) rowOrder[r] * cols + blockOrder[j] * block + e);
                        long at = (long) r * cols + j * block + e;
                        float got = out == OutputType.F32 ? dst.get(F32, 4 * at) : Float.float16ToFloat(dst.get(I16, 2 * at));
                        assertEquals(expected, got, "row " + r + " block " + j + " element " + e + " as " + out);
                    }
                }
            }
            assertNotNull(c.identity(), "permuted rows of a blob have an identity");
            assertTrue(c.identity().contains("column blocks [2, 0, 1]"), c.identity());
        }
    }

    /** Column blocks of an element function's output, one row per call: {@code log(-x)} of the swapped halves. */
    @Test
    void columnBlocksComposeWithAnElementFunction() {
        int rows = 3, cols = 4;
        F32Matrix m = F32Matrix.of(rows, cols, k -> -(k + 1) / 4.0);
        var inner = new UnitSource.Shifted(UnitSource.Blocks.stored(m.tensor(), cols, OutputType.F32), new ElementFunction.LogOfNeg(), OutputType.F32);
        var src = new UnitSource.ColumnBlocks(inner, new int[] {1, 0});
        MemorySegment dst = Arena.ofAuto().allocate(src.outUnitBytes());
        for (int r = 0; r < rows; r++) {
            src.write(List.of(m.blob()), r, 1, null, dst);
            for (int col = 0; col < cols; col++) {
                int from = r * cols + (col < 2 ? col + 2 : col - 2);
                assertEquals((float) Math.log((from + 1) / 4.0), dst.get(F32, 4L * col), "row " + r + " col " + col);
            }
        }
    }

    @Test
    void aColumnBlockOrderMustBeAPermutationThatSplitsTheRow() {
        F32Matrix m = F32Matrix.of(2, 6, k -> k);
        var rows = UnitSource.Blocks.stored(m.tensor(), 6, OutputType.F32);
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.ColumnBlocks(rows, new int[] {0, 0, 1}));
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.ColumnBlocks(rows, new int[] {0, 3, 1}));
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.ColumnBlocks(rows, new int[] {}));
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.ColumnBlocks(rows, new int[] {0, 1, 2, 3, 4}));
        int[] order = {1, 0};
        var ok = new UnitSource.ColumnBlocks(rows, order);
        order[0] = 0;
        assertEquals(1, ok.blockOrder()[0], "the order is copied");
        assertEquals(ok, new UnitSource.ColumnBlocks(rows, new int[] {1, 0}));
    }
}
