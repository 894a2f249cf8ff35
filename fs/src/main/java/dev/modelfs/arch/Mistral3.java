package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The text model of Mistral 3 (GGUF {@code mistral3}, llama.cpp's {@code Mistral3Model.Ministral3Model}: Mistral Small
 * 3.1 / 3.2, Ministral 3, Devstral), GGUF → Hugging Face only. The tensors are llama's (q/k rows permuted for the
 * interleaved rope, FORMATS.md §7.2). Without rope scaling (Mistral Small 3.1 / 3.2, whose text config is
 * {@code mistral}) the folder is a {@code MistralForCausalLM}; with yarn (Ministral 3) a {@code Ministral3ForCausalLM}
 * whose {@code rope_parameters} are read back from the GGUF: the factor, the original context, the betas
 * ({@code rope.scaling.yarn_beta_fast/slow}, default 32 and 1), {@code mscale_all_dim} =
 * {@code rope.scaling.yarn_log_multiplier} with {@code mscale} 1 (llama.cpp assumes it), and
 * {@code llama_4_scaling_beta} = {@code attention.temperature_scale} (the query scale
 * {@code 1 + beta * ln(1 + floor(pos / original_max_position_embeddings))}, llama.cpp's floor scale being the original
 * context too). Other rope scaling types are refused (docs/FORMATS.md §7.3, §7.4).
 */
public final class Mistral3 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("mistral3", List.of("Mistral3ForConditionalGeneration", "Ministral3ForCausalLM"),
            List.of("mistral3", "ministral3"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw new IllegalArgumentException("mistral3: modelfs maps Mistral 3 GGUFs to Hugging Face folders only, "
                + "not Hugging Face Mistral 3 models to GGUF");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        String type = m.string(p + "rope.scaling.type", "none");
        if (!type.equals("none") && !type.equals("yarn")) {
            throw new IllegalArgumentException(p + "rope.scaling.type " + type + ": only yarn is mapped for mistral3");
        }
        if (type.equals("none") && m.real(p + "attention.temperature_scale", 0.0) != 0) {
            throw new IllegalArgumentException(p + "attention.temperature_scale without yarn rope scaling is not mapped");
        }
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        c.put("mlp_bias", false);
        ObjectNode yarn = c.path("rope_scaling").isObject() ? (ObjectNode) c.remove("rope_scaling") : null;
        if (yarn == null) {
            MropeText.name(c, "MistralForCausalLM", "mistral");
            c.putNull("sliding_window");
            return;
        }
        MropeText.name(c, "Ministral3ForCausalLM", "ministral3");
        ObjectNode r = c.putObject("rope_parameters");
        r.put("rope_type", "yarn");
        r.put("rope_theta", YarnScaling.shortest(m.real(p + "rope.freq_base", 10_000.0)));
        r.put("factor", yarn.path("factor").asDouble());
        if (yarn.has("original_max_position_embeddings")) {
            r.put("original_max_position_embeddings", yarn.get("original_max_position_embeddings").asLong());
        }
        r.put("beta_fast", YarnScaling.shortest(m.real(p + "rope.scaling.yarn_beta_fast", 32.0)));
        r.put("beta_slow", YarnScaling.shortest(m.real(p + "rope.scaling.yarn_beta_slow", 1.0)));
        Double logMul = m.real(p + "rope.scaling.yarn_log_multiplier", null);
        if (logMul != null && logMul != 0) {
            r.put("mscale", 1.0);
            r.put("mscale_all_dim", YarnScaling.shortest(logMul));
        }
        r.put("llama_4_scaling_beta", YarnScaling.shortest(m.real(p + "attention.temperature_scale", 0.0)));
        c.remove("rope_theta");
        c.putNull("sliding_window");
    }
}
