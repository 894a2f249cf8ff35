package dev.modelfs.quant.mlx;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class MlxQuantTest {

    @Test
    void aliasesAndDefaults() {
        for (String s : new String[] {"int4", "INT4", " fp4 ", "Q4", "q4\n"}) {
            assertEquals(MlxQuant.affine(4, 64), MlxQuant.of(s, null), s);
        }
        for (String s : new String[] {"int8", "FP8", "q8", " Int8"}) {
            assertEquals(MlxQuant.affine(8, 64), MlxQuant.of(s, null), s);
        }
        assertEquals(new MlxQuant(MlxMode.NVFP4, 4, 16), MlxQuant.of("NVFP4", null));
        assertEquals(new MlxQuant(MlxMode.MXFP4, 4, 32), MlxQuant.of("mxfp4", null));
        assertEquals(new MlxQuant(MlxMode.MXFP8, 8, 32), MlxQuant.of("MxFp8 ", null));
        assertEquals(MlxQuant.affine(4, 32), MlxQuant.of("int4", 32));
        assertEquals(MlxQuant.affine(8, 128), MlxQuant.of("int8", 128));
        assertEquals(new MlxQuant(MlxMode.NVFP4, 4, 16), MlxQuant.of("nvfp4", 16));
    }

    @Test
    void rejectsUnknownTypesAndBadParameters() {
        for (String s : new String[] {"", "  ", "int3", "fp16", "bf16", "affine", "nvfp8", "e4m3"}) {
            assertThrows(IllegalArgumentException.class, () -> MlxQuant.of(s, null), s);
        }
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of(null, null));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of("int4", 16));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of("int4", 0));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of("nvfp4", 32));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of("mxfp4", 16));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.of("mxfp8", 64));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.affine(7, 64));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.affine(1, 64));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.affine(16, 64));
        assertThrows(IllegalArgumentException.class, () -> MlxQuant.affine(4, 256));
        assertThrows(IllegalArgumentException.class, () -> new MlxQuant(MlxMode.NVFP4, 8, 16));
        assertThrows(NullPointerException.class, () -> new MlxQuant(null, 4, 64));
    }

    @Test
    void allValidAffineCombinations() {
        for (int bits : new int[] {2, 3, 4, 5, 6, 8}) {
            for (int g : new int[] {32, 64, 128}) {
                MlxQuant q = MlxQuant.affine(bits, g);
                assertEquals(g * bits / 8, q.codeBytesPerGroup());
                assertEquals(MlxMode.AFFINE, q.mode());
            }
        }
    }

    @Test
    void namesAndSizes() {
        assertEquals("int4", MlxQuant.affine(4, 32).canonicalName());
        assertEquals("int8", MlxQuant.affine(8, 64).canonicalName());
        assertEquals("affine3", MlxQuant.affine(3, 64).canonicalName());
        assertEquals("affine6", MlxQuant.affine(6, 128).canonicalName());
        assertEquals("nvfp4", MlxQuant.of("nvfp4", null).canonicalName());
        assertEquals("mxfp4", MlxQuant.of("mxfp4", null).canonicalName());
        assertEquals("mxfp8", MlxQuant.of("mxfp8", null).canonicalName());
        assertEquals(32, MlxQuant.affine(4, 64).codeBytesPerGroup());
        assertEquals(24, MlxQuant.affine(3, 64).codeBytesPerGroup());
        assertEquals(8, MlxQuant.of("nvfp4", null).codeBytesPerGroup());
        assertEquals(16, MlxQuant.of("mxfp4", null).codeBytesPerGroup());
        assertEquals(32, MlxQuant.of("mxfp8", null).codeBytesPerGroup());
    }
}
