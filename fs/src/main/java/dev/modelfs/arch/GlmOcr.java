package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The text model of GLM-OCR (GGUF {@code glm4} with M-RoPE sections: llama.cpp's {@code GlmOCRModel}, and Ollama's
 * {@code glmocr} dialect once translated, docs/FORMATS.md §12.15), GGUF → Hugging Face only, as a {@code Glm4ForCausalLM}
 * folder: GLM-4's tensors (sandwich norms {@code post_self_attn_layernorm} ↔ {@code post_attention_norm} and
 * {@code post_mlp_layernorm} ↔ {@code post_ffw_norm}, the fused {@code mlp.gate_up_proj} ↔ {@code ffn_up}, q/k/v biases
 * where the GGUF has them). GLM rotates interleaved pairs (GPT-J style); llama.cpp's M-RoPE kernel rotates NeoX halves,
 * so its converter reorders each head's q/k rows even ones first ({@code Glm4Model.normal_to_neox}), the inverse of
 * llama's permutation ({@link #permutationReversed}). On text all three M-RoPE positions are the token's, so
 * {@code GlmOcrForConditionalGeneration}'s text-only forward is {@code Glm4ForCausalLM}'s with full rotation
 * ({@code partial_rotary_factor} 1, GLM-OCR's). A plain {@code glm4} GGUF (GLM-4-0414: no sections, half rotation,
 * rows unpermuted) is not this architecture ({@link #claims}).
 *
 * <p>GLM-OCR's published checkpoint holds an MTP layer after its 16 text layers ({@code text_config.num_nextn_predict_layers}
 * 1, {@code model.language_model.layers.16.*}: a decoder layer with {@code eh_proj}, {@code enorm}, {@code hnorm},
 * {@code shared_head.*}, {@code embed_tokens}), which {@code GlmOcrForConditionalGeneration} does not load; llama.cpp's
 * converter writes it as the last block ({@code block_count} 17, {@code nextn_predict_layers} 1, {@code blk.16.nextn.*}).
 * The folder leaves that block out ({@link NextnLayers}) and says {@code num_hidden_layers} 16.
 *
 * <p>Refused: partial rotation or a fourth rope section ({@link MropeText}), and as many MTP layers as blocks.
 */
public final class GlmOcr implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, List.of(
            LayerRule.norm("post_self_attn_layernorm", "post_attention_norm"),
            Layers.FFN_NORM,
            new LayerRule("mlp.down_proj", "ffn_down", d -> new long[]{d.hidden(), d.ff()}),
            new LayerRule("mlp.gate_up_proj", "ffn_up", d -> new long[]{2L * d.ff(), d.hidden()}),
            LayerRule.norm("post_mlp_layernorm", "post_ffw_norm")));
    private static final Tables TABLES = new Tables("glm4", List.of("GlmOcrForConditionalGeneration"), List.of("glm_ocr"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    /** A {@code glm4} GGUF with M-RoPE: time and height sections both non-zero (llama.cpp's {@code use_mrope()}). */
    /** {@code attention.key_length}, else {@code embedding_length / head_count} (llama.cpp's default, never the rope width). */
    @Override
    public int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "attention.key_length", (long) hidden / heads);
    }

    @Override
    public boolean claims(GgufParams m) {
        int[] s = m.ints("glm4.rope.dimension_sections");
        return s != null && s.length >= 2 && s[0] > 0 && s[1] > 0;
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public boolean permutationReversed() {
        return true;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw MropeText.ggufToHfOnly("glm4 (GLM-OCR)", "Glm4ForCausalLM");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        int hidden = (int) (long) m.integer(p + "embedding_length", 0L), heads = (int) (long) m.integer(p + "attention.head_count", 1L);
        MropeText.check(m, p, headDim(m, p, hidden, heads));
        NextnLayers.textLayers(m, p);
    }

    /** The MTP block(s) ({@link NextnLayers}): no {@code Glm4ForCausalLM} tensor, which transformers loads without. */
    @Override
    public boolean hfLeavesOut(String ggufName, GgufParams m, String p) {
        return NextnLayers.mtp(ggufName, m, p);
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        MropeText.name(c, "Glm4ForCausalLM", "glm4");
        c.put("num_hidden_layers", NextnLayers.textLayers(m, p));   // the MTP block left out
        c.put("partial_rotary_factor", 1.0);   // MropeText.check: every dimension rotates (Glm4Config's default is 0.5)
    }
}
