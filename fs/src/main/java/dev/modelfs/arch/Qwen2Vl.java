package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The text model of Qwen2-VL / Qwen2.5-VL (GGUF {@code qwen2vl}, llama.cpp's {@code Qwen2VLModel}), GGUF → Hugging Face
 * only, as a {@code Qwen2ForCausalLM} folder: Qwen2's tensors (q/k/v biases required, NeoX rope, no permutation) and
 * M-RoPE, which is plain rope on text ({@link MropeText}). The vision tower is not part of the GGUF (llama.cpp writes it
 * to the {@code mmproj}); the tables name the vision-language classes the GGUF comes from (docs/FORMATS.md §7.3).
 */
public final class Qwen2Vl implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen2vl",
            List.of("Qwen2_5_VLForConditionalGeneration", "Qwen2VLForConditionalGeneration"), List.of("qwen2_5_vl", "qwen2_vl"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public List<String> requiredBiases() {
        return Qwen2.QKV_BIASES;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw MropeText.ggufToHfOnly("qwen2vl", "Qwen2ForCausalLM");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        int hidden = (int) (long) m.integer(p + "embedding_length", 0L), heads = (int) (long) m.integer(p + "attention.head_count", 1L);
        MropeText.check(m, p, headDim(m, p, hidden, heads));
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        MropeText.name(c, "Qwen2ForCausalLM", "qwen2");
    }
}
