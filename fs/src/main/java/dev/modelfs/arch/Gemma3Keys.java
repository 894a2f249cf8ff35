package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * The Gemma 3 text KVs of a synthesized GGUF beyond {@link ConfigKeys#ENTRIES} (docs/FORMATS.md §7.4), as
 * llama.cpp's converter ({@code Gemma3Model.set_gguf_parameters}) writes them and its {@code gemma3} loader
 * reads them: {@code rope.freq_base} (global layers; default 1e6), {@code rope.freq_base_swa} (local layers),
 * {@code attention.sliding_window}, {@code final_logit_softcapping}.
 *
 * <p>Invariant: a config llama.cpp would run differently from transformers is refused (throws
 * {@link IllegalArgumentException}): layer types other than llama.cpp's fixed pattern (every 6th layer
 * global), a query scale other than the one llama.cpp assumes, attention logit soft-capping, rope scaling
 * of the global layers, no {@code head_dim}.
 */
final class Gemma3Keys {
    private Gemma3Keys() {
    }

    /** The extra KVs, given the ones {@code done} already written (prefix {@code p} = {@code "gemma3."}). */
    static List<GgufKv> extra(JsonNode c, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        List<GgufKv> out = new ArrayList<>();
        if (!c.hasNonNull("head_dim")) {
            throw new IllegalArgumentException("gemma3 config.json without head_dim");
        }
        int scalar = d.layers() == 62 ? d.hidden() / d.heads() : d.headDim();
        if (!c.path("query_pre_attn_scalar").isNumber() || c.path("query_pre_attn_scalar").doubleValue() != scalar) {
            throw new IllegalArgumentException("gemma3 query_pre_attn_scalar " + c.path("query_pre_attn_scalar")
                    + " is not the " + scalar + " llama.cpp assumes");
        }
        if (c.hasNonNull("attn_logit_softcapping")) {
            throw new IllegalArgumentException("gemma3 attn_logit_softcapping is not supported by llama.cpp");
        }
        String rt = c.path("rope_parameters").path("full_attention").path("rope_type").asText("default");
        if (!rt.equals("default")) {
            throw new IllegalArgumentException("gemma3 rope scaling " + rt + " of the global layers is not mapped");
        }
        if (done.stream().noneMatch(k -> k.key().equals(p + "rope.freq_base"))) {
            out.add(new GgufKv(p + "rope.freq_base", GgufValueType.FLOAT32, 1000000f, 0, 0));
        }
        ConfigKeys.field(c, List.of("rope_parameters.sliding_attention.rope_theta", "rope_local_base_freq"))
                .ifPresent(v -> out.add(new GgufKv(p + "rope.freq_base_swa", GgufValueType.FLOAT32, (float) v.doubleValue(), 0, 0)));
        JsonNode window = c.path("sliding_window");
        boolean swa = window.isIntegralNumber() && window.intValue() > 0;
        if (swa) {
            out.add(new GgufKv(p + "attention.sliding_window", GgufValueType.UINT32, window.intValue(), 0, 0));
        }
        JsonNode types = c.path("layer_types");
        for (int i = 0; types.isArray() && i < types.size(); i++) {
            String want = swa && (i + 1) % 6 != 0 ? "sliding_attention" : "full_attention";
            if (!want.equals(types.get(i).asText())) {
                throw new IllegalArgumentException("gemma3 layer_types[" + i + "] = " + types.get(i)
                        + ": llama.cpp's gemma3 makes every 6th layer global, the others sliding");
            }
        }
        if (types.isArray() && types.size() != d.layers()) {
            throw new IllegalArgumentException("gemma3 layer_types has " + types.size() + " entries, not " + d.layers());
        }
        JsonNode cap = c.path("final_logit_softcapping");
        if (cap.isNumber() && cap.doubleValue() != 0) {
            out.add(new GgufKv(p + "final_logit_softcapping", GgufValueType.FLOAT32, (float) cap.doubleValue(), 0, 0));
        }
        return out;
    }
}
