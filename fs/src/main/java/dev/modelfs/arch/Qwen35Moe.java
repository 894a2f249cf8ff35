package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Optional;

/**
 * Qwen 3.5 / 3.6 MoE text ({@code Qwen3_5MoeForCausalLM}, {@code model_type} {@code qwen3_5_moe_text}; GGUF
 * {@code qwen35moe}), the Hugging Face → GGUF direction: {@link Qwen35}'s layers with, in every layer, a router
 * {@code mlp.gate} ({@code ffn_gate_inp}), routed experts ({@code mlp.experts.E.<proj>} per expert, or stacked
 * {@code [E, out, in]} as Ollama's importer writes them) ↔ {@code ffn_*_exps}, and a shared expert with its sigmoid gate
 * ({@code ffn_*_shexp}, {@code ffn_gate_inp_shexp}). The GGUF → Hugging Face direction is not mapped ({@link #checkGguf}).
 */
public final class Qwen35Moe implements ArchSpec {
    static final Experts EXPERTS = new Experts("mlp.experts", "gate_proj", "up_proj", "down_proj", "moe_intermediate_size",
            "shared_expert_intermediate_size");
    private static final List<ConfigKeys.Entry> ENTRIES = Layers.of(Qwen3Moe.ROUTED, List.of(
            new ConfigKeys.Entry("expert_shared_feed_forward_length", GgufValueType.UINT32, List.of("shared_expert_intermediate_size"), true)));
    private static final List<String> FFN = List.of("ffn_gate_inp.weight", "ffn_gate_exps.weight", "ffn_up_exps.weight",
            "ffn_down_exps.weight", "ffn_gate_inp_shexp.weight", "ffn_gate_shexp.weight", "ffn_up_shexp.weight", "ffn_down_shexp.weight");
    private static final List<LayerRule> LAYERS = Layers.of(Qwen35.ATTENTION, Layers.routedExperts("mlp.gate", EXPERTS), List.of(
            new LayerRule("mlp.shared_expert_gate", "ffn_gate_inp_shexp", d -> new long[] {1, d.hidden()}),
            new LayerRule("mlp.shared_expert.gate_proj", "ffn_gate_shexp", d -> new long[] {d.sharedFf(), d.hidden()}),
            new LayerRule("mlp.shared_expert.up_proj", "ffn_up_shexp", d -> new long[] {d.sharedFf(), d.hidden()}),
            new LayerRule("mlp.shared_expert.down_proj", "ffn_down_shexp", d -> new long[] {d.hidden(), d.sharedFf()})));
    private static final Tables TABLES = new Tables("qwen35moe", List.of("Qwen3_5MoeForCausalLM"), List.of("qwen3_5_moe_text"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public Optional<Experts> experts() {
        return Optional.of(EXPERTS);
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ENTRIES;
    }

    /** The text of Qwen 3.5 with vision ({@code text_config}, {@code model.language_model.*}); the vision tower left out. */
    private static final List<TextPart> TEXT_PARTS = List.of(new TextPart("Qwen3_5MoeForConditionalGeneration", "text_config",
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
        return Qwen35Synth.requiredInLayer(layer, config, FFN);
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
        throw new IllegalArgumentException("qwen35moe: the Hugging Face folder of a qwen35moe GGUF is not mapped (only the synthesized GGUF "
                + "of Qwen3_5MoeForCausalLM safetensors is)");
    }
}
