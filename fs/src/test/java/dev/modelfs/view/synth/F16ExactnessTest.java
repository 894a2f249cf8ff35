package dev.modelfs.view.synth;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.quant.FloatCasts;
import org.junit.jupiter.api.Test;

/** Which scale values allow the lossless int4 -> Q4_1 re-label (FORMATS.md §7.5). */
class F16ExactnessTest {
    @Test
    void exactlyTheValuesF16Holds() {
        for (float v : new float[]{0f, -0f, 1f, -2.5f, 65504f, 0x1p-14f, 0x1p-24f, 3 * 0x1p-24f, 0.0078125f}) {
            assertTrue(F16Exactness.exactInF16(v), Float.toString(v));
        }
        for (float v : new float[]{65520f, 1e6f, 0x1p-25f, 0x1.8p-25f, 0.1f, Float.NaN, Float.POSITIVE_INFINITY, 1 + 0x1p-11f}) {
            assertFalse(F16Exactness.exactInF16(v), Float.toString(v));
        }
        // a bf16 value has 8 significant bits: exact in f16 iff its exponent fits (normal from 2^-14, subnormal to 2^-17)
        assertTrue(F16Exactness.exactInF16(FloatCasts.bf16ToF32(FloatCasts.f32ToBf16(0.0123f))));
        assertTrue(F16Exactness.exactInF16(FloatCasts.bf16ToF32(FloatCasts.f32ToBf16(1.01f * 0x1p-17f))));
        assertFalse(F16Exactness.exactInF16(FloatCasts.bf16ToF32(FloatCasts.f32ToBf16(1.5f * 0x1p-20f + 0x1p-27f))));
    }
}
