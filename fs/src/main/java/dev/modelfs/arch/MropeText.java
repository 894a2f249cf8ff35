package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The text model of a vision-language GGUF with M-RoPE ({@code qwen2vl}, {@code qwen3vl}, {@code qwen3vlmoe}, GLM-OCR's
 * {@code glm4}) as the plain causal LM it is on
 * text: multi-axis rope (M-RoPE, llama.cpp's {@code rope.dimension_sections}) gives each rotated pair the temporal,
 * height or width position of the token, and a text token has the same position on all three, so every pair rotates
 * by the one position as in ordinary NeoX rope (docs/FORMATS.md §7.3). Only a fourth section (llama.cpp's extra
 * position, 0 for text) or a partial rotation would change that; both are refused.
 */
final class MropeText {
    private MropeText() {
    }

    /** Refuses sections with a non-zero fourth entry and a {@code rope.dimension_count} other than {@code headDim}. */
    static void check(GgufParams m, String p, int headDim) {
        checkSections(m, p);
        long rot = m.integer(p + "rope.dimension_count", (long) headDim);
        if (rot != headDim) {
            throw new IllegalArgumentException(p + "rope.dimension_count = " + rot + ", not the head dimension " + headDim
                    + " (partial rotation is not mapped)");
        }
    }

    /** Refuses sections with a non-zero fourth entry (llama.cpp's extra position, not plain rope on text). */
    static void checkSections(GgufParams m, String p) {
        int[] sections = m.ints(p + "rope.dimension_sections");
        if (sections != null) {
            for (int i = 3; i < sections.length; i++) {
                if (sections[i] != 0) {
                    throw new IllegalArgumentException(p + "rope.dimension_sections[" + i + "] = " + sections[i]
                            + ": a rope section beyond time, height and width is not plain rope on text");
                }
            }
        }
    }

    /** Names the text class ({@code architectures}, {@code model_type}) in a rebuilt {@code config.json}. */
    static void name(ObjectNode c, String architecture, String modelType) {
        c.putArray("architectures").add(architecture);
        c.put("model_type", modelType);
    }

    /** The refusal of the Hugging Face → GGUF direction for a vision-language architecture mapped GGUF → HF only. */
    static IllegalArgumentException ggufToHfOnly(String gguf, String textClass) {
        return new IllegalArgumentException(gguf + ": modelfs maps its GGUF's text model to a Hugging Face " + textClass
                + " folder only, not Hugging Face vision-language models to GGUF");
    }
}
