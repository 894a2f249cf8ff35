package dev.modelfs.convert;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.gguf.GgmlType;
import org.junit.jupiter.api.Test;

/** The three float output types: widths, GGML ids and llama_ftype values from ggml.h / llama.h, variant folders. */
class OutputTypeTest {
    @Test
    void namesAndNumbersMatchTheReferences() {
        // ggml.h: GGML_TYPE_F32 = 0, F16 = 1, BF16 = 30; llama.h: LLAMA_FTYPE_ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_BF16 = 32
        assertEquals(0, OutputType.F32.ggml.id());
        assertEquals(1, OutputType.F16.ggml.id());
        assertEquals(30, OutputType.BF16.ggml.id());
        assertEquals(0, OutputType.F32.llamaFileType);
        assertEquals(1, OutputType.F16.llamaFileType);
        assertEquals(32, OutputType.BF16.llamaFileType);
        assertEquals(4, OutputType.F32.bytes);
        assertEquals(2, OutputType.F16.bytes);
        assertEquals(2, OutputType.BF16.bytes);
        assertEquals(Dtype.BF16, OutputType.BF16.dtype);
    }

    @Test
    void eachTypeHasItsVariantFolder() {
        assertEquals("bf16/model.safetensors", OutputType.BF16.inFolder("model.safetensors"));
        assertEquals("fp16/config.json", OutputType.F16.inFolder("config.json"));
        assertEquals("fp32/x", OutputType.F32.inFolder("x"));
        assertEquals(OutputType.F16, OutputType.of(GgmlType.F16));
        assertThrows(IllegalArgumentException.class, () -> OutputType.of(GgmlType.Q4_K));
    }
}
