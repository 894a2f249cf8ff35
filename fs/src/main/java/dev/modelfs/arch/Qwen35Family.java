package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.List;
import java.util.Optional;

/**
 * What Qwen 3.5's dense and MoE text models share ({@link GatedDeltaNet}): the hybrid layers, norms stored as
 * {@code 1 + w}, the MTP layers left out of the Hugging Face folder and of the synthesized GGUF; both directions
 * (Hugging Face → GGUF: {@link Qwen35Synth}).
 */
public sealed interface Qwen35Family extends ArchSpec permits Qwen35, Qwen35Moe {

    @Override
    default float normShift() {
        return 1f;
    }

    // ---- Hugging Face → GGUF (the synthesized model.gguf): Qwen35Synth

    @Override
    default void checkHfConfig(JsonNode config) {
        Qwen35Synth.checkHfConfig(config);
    }

    @Override
    default List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return Qwen35Synth.extraKvs(config, p, d);
    }

    /** Per layer type (Qwen35Synth), with {@code ssm_a} and {@code ssm_dt}, which no rule names. */
    @Override
    default Optional<long[]> layerShape(String gguf, int layer, JsonNode config, ConfigKeys.Dims d) {
        return Qwen35Synth.layerShape(layers(), gguf, layer, config, d);
    }

    /** The layer type's tensors, then the feed-forward's (every rule of a {@code ffn_*} tensor). */
    @Override
    default List<String> requiredInLayer(int layer, JsonNode config) {
        return Qwen35Synth.requiredInLayer(layer, config, layers().stream().filter(r -> r.gguf().startsWith("ffn_"))
                .map(r -> r.gguf() + ".weight").toList());
    }

    @Override
    default Optional<TensorRewrite> rewrite(String gguf, int layer, JsonNode config) {
        return Qwen35Synth.rewrite(gguf, layer, config);
    }

    @Override
    default Optional<String> otherGgufName(String hfName) {
        return Qwen35Synth.otherGgufName(hfName, experts().isPresent());
    }

    @Override
    default Optional<List<String>> splitToGguf(String hfName) {
        return Qwen35Synth.splitToGguf(hfName, experts().isPresent());
    }

    @Override
    default boolean leftOut(String hfName) {
        return Qwen35Synth.leftOut(hfName);
    }

    @Override
    default boolean shiftsNorm(String hfName) {
        return hfName.endsWith("norm.weight") && !hfName.endsWith("linear_attn.norm.weight");
    }

    /** The text of {@code Qwen3_5(Moe)ForConditionalGeneration}: {@code text_config}, {@code model.language_model.*}; the tower left out. */
    @Override
    default List<TextPart> textParts() {
        return List.of(new TextPart(tables().hfArchitectures().getFirst().replace("ForCausalLM", "ForConditionalGeneration"), "text_config",
                "model.language_model.", List.of("model.visual.")));
    }

    // ---- GGUF → Hugging Face

    @Override
    default void checkGguf(GgufParams m, String p) {
        GatedDeltaNet.checkGguf(m, p);
    }

    @Override
    default boolean hfLeavesOut(String ggufName, GgufParams m, String p) {
        return NextnLayers.mtp(ggufName, m, p);
    }

    @Override
    default Optional<HfLayout> hfLayout(String ggufName, long[] ne, GgufParams m, String p) {
        return GatedDeltaNet.hfLayout(ggufName, ne, m, p);
    }

    @Override
    default void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        GatedDeltaNet.completeHfConfig(c, m, p, headDim);
    }
}
