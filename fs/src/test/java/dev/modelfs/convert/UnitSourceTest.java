package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.model.BlobRange;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.store.Digest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Units written straight from a source, without UnitConverted's chunking: a stored F16 tensor copied
 * or widened (IEEE half to float, here by {@link Float#float16ToFloat}), in a given unit order, and
 * the checks that keep units inside their blob.
 */
class UnitSourceTest {
    static final Digest BLOB = new Digest("7".repeat(64));
    static final int ROWS = 3, COLS = 4, OFFSET = 8;

    /** A blob with 8 bytes of something else, then a 3x4 F16 matrix whose element k is k - 5.5. */
    static MemorySegment blob() {
        MemorySegment b = Arena.ofAuto().allocate(OFFSET + 2L * ROWS * COLS);
        for (int k = 0; k < ROWS * COLS; k++) {
            b.set(I16, OFFSET + 2L * k, Float.floatToFloat16(k - 5.5f));
        }
        return b;
    }

    static StoredTensor f16() {
        return new StoredTensor("w", Dtype.F16, new long[] {ROWS, COLS}, new BlobRange(BLOB, OFFSET + 2L * ROWS * COLS, OFFSET, 2L * ROWS * COLS));
    }

    @Test
    void storedF16RowsWidenedInTheGivenOrder() {
        UnitSource.Blocks s = UnitSource.Blocks.stored(f16(), COLS, OutputType.F32);
        assertFalse(s.copy());
        assertEquals(4L * COLS, s.outUnitBytes());
        assertEquals(List.of(new BlobRef(BLOB, OFFSET + 2L * ROWS * COLS)), s.blobs());
        MemorySegment dst = Arena.ofAuto().allocate(4L * ROWS * COLS);
        s.write(List.of(blob()), 0, ROWS, u -> ROWS - 1 - u, dst);        // rows reversed
        for (int r = 0; r < ROWS; r++) {
            for (int c = 0; c < COLS; c++) {
                int k = (ROWS - 1 - r) * COLS + c;
                assertEquals(k - 5.5f, dst.get(F32, 4L * (r * COLS + c)), "row " + r + " col " + c);
            }
        }
    }

    @Test
    void aStoredTensorOfTheOutputTypeIsCopied() {
        UnitSource.Blocks s = UnitSource.Blocks.stored(f16(), COLS, OutputType.F16);
        assertTrue(s.copy());
        MemorySegment src = blob();
        MemorySegment dst = Arena.ofAuto().allocate(2L * COLS * 2);
        s.write(List.of(src), 1, 2, null, dst);                           // rows 1 and 2, as stored
        assertArrayEquals(src.asSlice(OFFSET + 2L * COLS, 2L * COLS * 2).toArray(ValueLayout.JAVA_BYTE), dst.toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void unitsOutsideTheBlobAndShiftsOfNonF32UnitsAreRefused() {
        UnitSource.Blocks s = UnitSource.Blocks.stored(f16(), COLS, OutputType.F32);
        s.requireUnits(ROWS, "w");
        assertThrows(IllegalArgumentException.class, () -> s.requireUnits(ROWS + 1, "w"));
        assertThrows(IllegalArgumentException.class, () -> new UnitSource.Shifted(UnitSource.Blocks.stored(f16(), COLS, OutputType.F16), 1f, OutputType.F16));
        UnitSource.Shifted shifted = new UnitSource.Shifted(s, 1f, OutputType.F32);
        MemorySegment dst = Arena.ofAuto().allocate(4L * COLS);
        shifted.write(List.of(blob()), 2, 1, null, dst);
        assertEquals(2 * COLS - 5.5f + 1f, dst.get(F32, 0), "row 2's first element plus one");
    }

    /** A constant fill reads no blob and writes numpy's {@code np.ones(n, dtype).tobytes()} (f32 3f800000, f16 3c00, bf16 3f80). */
    @Test
    void filledIsOnesInEveryOutputType() {
        java.util.Map<OutputType, String> numpyOnes = java.util.Map.of(OutputType.F32, "0000803f", OutputType.F16, "003c",
                OutputType.BF16, "803f");
        for (OutputType o : OutputType.values()) {
            UnitSource.Filled f = new UnitSource.Filled(1f, o);
            assertEquals(List.of(), f.blobs());
            assertEquals(o.bytes, f.outUnitBytes());
            MemorySegment dst = Arena.ofAuto().allocate(5L * o.bytes);
            f.write(List.of(), 1, 5, null, dst);
            assertEquals(numpyOnes.get(o).repeat(5), java.util.HexFormat.of().formatHex(dst.toArray(ValueLayout.JAVA_BYTE)), o.name());
        }
        UnitConverted c = new UnitConverted(new UnitSource.Filled(1f, OutputType.BF16), 3, null, "ones");
        assertEquals(6, c.length());
        MemorySegment dst = Arena.ofAuto().allocate(6);
        c.compute(0, List.of(), dst);
        assertEquals("803f".repeat(3), java.util.HexFormat.of().formatHex(dst.toArray(ValueLayout.JAVA_BYTE)));
    }
}
