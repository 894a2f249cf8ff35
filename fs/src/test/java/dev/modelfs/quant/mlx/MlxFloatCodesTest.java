package dev.modelfs.quant.mlx;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static dev.modelfs.quant.mlx.MlxTestSupport.jsonFloat;
import static dev.modelfs.quant.mlx.MlxTestSupport.vectors;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The kernels' decode tables equal {@code vectors/fp_tables.json} (E2M1, MLX E4M3, MLX E8M0). */
class MlxFloatCodesTest {

    private static void assertTable(String key, float[] table) {
        JsonNode t = vectors("fp_tables.json").get(key);
        assertEquals(table.length, t.size(), key + " size");
        for (int i = 0; i < table.length; i++) {
            assertEquals(Float.floatToRawIntBits(jsonFloat(t.get(i))), Float.floatToRawIntBits(table[i]), key + "[" + i + "]");
        }
    }

    @Test
    void e2m1() {
        assertTable("e2m1", MlxFloatCodes.E2M1);
        for (int i = 0; i < 16; i++) assertEquals(MlxFloatCodes.E2M1[i], MlxFloatCodes.e2m1(i | 0x30));
    }

    @Test
    void e4m3Mlx() {
        assertTable("e4m3_mlx", MlxFloatCodes.E4M3);
        assertEquals(480f, MlxFloatCodes.e4m3(0x7F));
        assertEquals(-480f, MlxFloatCodes.e4m3(0xFF));
        assertEquals(448f, MlxFloatCodes.e4m3(0x7E));
        assertEquals(1f, MlxFloatCodes.e4m3(0x38));
        assertEquals(0x1p-9f, MlxFloatCodes.e4m3(0x01));
        assertEquals(Float.floatToRawIntBits(-0f), Float.floatToRawIntBits(MlxFloatCodes.e4m3(0x80)));
    }

    @Test
    void e8m0Mlx() {
        assertTable("e8m0_mlx", MlxFloatCodes.E8M0);
        assertEquals(0x1p-127f, MlxFloatCodes.e8m0(0));
        assertEquals(1f, MlxFloatCodes.e8m0(127));
        assertEquals(Float.POSITIVE_INFINITY, MlxFloatCodes.e8m0(255));
    }
}
