package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;

/**
 * What Qwen 3.5's dense and MoE text models share ({@link GatedDeltaNet}): the hybrid layers, norms stored as
 * {@code 1 + w}, the MTP layers left out of the Hugging Face folder; GGUF → Hugging Face only so far.
 */
public sealed interface Qwen35Family extends ArchSpec permits Qwen35, Qwen35Moe {

    @Override
    default float normShift() {
        return 1f;
    }

    @Override
    default void checkHfConfig(JsonNode config) {
        throw GatedDeltaNet.hfToGguf(tables().hfArchitectures().getFirst());
    }

    @Override
    default Optional<long[]> layerShape(String gguf, int layer, JsonNode config, ConfigKeys.Dims d) {
        return GatedDeltaNet.layerShape(layers(), gguf, layer, config, d);
    }

    @Override
    default void checkGguf(GgufParams m, String p) {
        GatedDeltaNet.checkGguf(m, p);
    }

    @Override
    default boolean hfLeavesOut(String ggufName, GgufParams m, String p) {
        return GatedDeltaNet.mtp(ggufName, m, p);
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
