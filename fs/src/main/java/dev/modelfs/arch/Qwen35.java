package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.List;
import java.util.Optional;

/**
 * Qwen 3.5 dense text ({@code Qwen3_5ForCausalLM}, {@code model_type} {@code qwen3_5_text}; GGUF {@code qwen35}), the
 * Hugging Face → GGUF direction ({@link Qwen35Synth}): gated delta-net layers and gated full-attention layers, norms
 * stored as {@code 1 + w} except {@code ssm_norm}. The rules name every per-layer tensor of either layer type (which a
 * layer has is {@link #requiredInLayer}'s, their shapes {@link #layerShape}'s, from {@code config.json}); {@code A_log}
 * and {@code dt_bias} are named by {@link #otherGgufName}. The GGUF → Hugging Face direction is not mapped
 * ({@link #checkGguf} refuses: the folder would have to undo the converter's value changes).
 */
public final class Qwen35 implements ArchSpec {
    /** The per-layer tensors of both layer types; their shapes come from {@code config.json} ({@link Qwen35Synth#layerShape}). */
    static final List<LayerRule> ATTENTION = List.of(
            rule("input_layernorm", "attn_norm"),
            rule("self_attn.q_proj", "attn_q"), rule("self_attn.k_proj", "attn_k"), rule("self_attn.v_proj", "attn_v"),
            rule("self_attn.o_proj", "attn_output"), rule("self_attn.q_norm", "attn_q_norm"), rule("self_attn.k_norm", "attn_k_norm"),
            rule("linear_attn.in_proj_qkv", "attn_qkv"), rule("linear_attn.in_proj_z", "attn_gate"),
            rule("linear_attn.in_proj_a", "ssm_alpha"), rule("linear_attn.in_proj_b", "ssm_beta"),
            rule("linear_attn.conv1d", "ssm_conv1d"), rule("linear_attn.norm", "ssm_norm"), rule("linear_attn.out_proj", "ssm_out"),
            rule("post_attention_layernorm", "post_attention_norm"));
    private static final List<LayerRule> LAYERS = Layers.of(ATTENTION, Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("qwen35", List.of("Qwen3_5ForCausalLM"), List.of("qwen3_5_text"), LAYERS);

    /** A rule whose shape is {@link Qwen35Synth#layerShape}'s (it depends on the layer type). */
    private static LayerRule rule(String hf, String gguf) {
        return new LayerRule(hf, gguf, d -> {
            throw new IllegalStateException("qwen35 " + gguf + ": the shape depends on the layer type (Qwen35Synth.layerShape)");
        });
    }

    @Override
    public Tables tables() {
        return TABLES;
    }

    /** The text of Qwen 3.5 with vision ({@code text_config}, {@code model.language_model.*}); the vision tower left out. */
    private static final List<TextPart> TEXT_PARTS = List.of(new TextPart("Qwen3_5ForConditionalGeneration", "text_config",
            "model.language_model.", List.of("model.visual.")));

    @Override
    public List<TextPart> textParts() {
        return TEXT_PARTS;
    }

    @Override
    public float normShift() {
        return 1f;
    }

    @Override
    public boolean shiftsNorm(String hfName) {
        return hfName.endsWith("norm.weight") && !hfName.endsWith("linear_attn.norm.weight");
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        Qwen35Synth.checkHfConfig(config);
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return Qwen35Synth.extraKvs(config, p, d);
    }

    @Override
    public Optional<long[]> layerShape(String gguf, int layer, JsonNode config, ConfigKeys.Dims d) {
        return Qwen35Synth.layerShape(LAYERS, gguf, layer, config, d);
    }

    @Override
    public List<String> requiredInLayer(int layer, JsonNode config) {
        return Qwen35Synth.requiredInLayer(layer, config, List.of("ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"));
    }

    @Override
    public Optional<TensorRewrite> rewrite(String gguf, int layer, JsonNode config) {
        return Qwen35Synth.rewrite(gguf, layer, config);
    }

    @Override
    public Optional<String> otherGgufName(String hfName) {
        return Qwen35Synth.otherGgufName(hfName);
    }

    @Override
    public boolean leftOut(String hfName) {
        return Qwen35Synth.leftOut(hfName);
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        throw new IllegalArgumentException("qwen35: the Hugging Face folder of a qwen35 GGUF is not mapped (only the synthesized GGUF of "
                + "Qwen3_5ForCausalLM safetensors is)");
    }
}
