package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The text model of Qwen3-VL (GGUF {@code qwen3vl}, llama.cpp's {@code Qwen3VLTextModel}), GGUF → Hugging Face only, as
 * a {@code Qwen3ForCausalLM} folder: Qwen3's tensors (per-head q/k norms, no biases, NeoX rope) and interleaved M-RoPE,
 * which is plain rope on text ({@link MropeText}); the deepstack layers ({@code n_deepstack_layers}) add visual features
 * at image positions only, so a text prompt never reaches them (docs/FORMATS.md §7.3).
 */
public final class Qwen3Vl implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, Layers.QK_NORMS,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen3vl", List.of("Qwen3VLForConditionalGeneration"), List.of("qwen3_vl"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw MropeText.ggufToHfOnly("qwen3vl", "Qwen3ForCausalLM");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        int hidden = (int) (long) m.integer(p + "embedding_length", 0L), heads = (int) (long) m.integer(p + "attention.head_count", 1L);
        MropeText.check(m, p, headDim(m, p, hidden, heads));
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        MropeText.name(c, "Qwen3ForCausalLM", "qwen3");
    }
}
