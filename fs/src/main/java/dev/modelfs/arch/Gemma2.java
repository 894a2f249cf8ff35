package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Gemma 2 ({@code Gemma2ForCausalLM}): four norms a layer, no q/k norms, NeoX rope, tied embeddings, attention
 * and final logit soft-capping, sliding-window attention on every other layer (layer 0 local); llama.cpp
 * stores every norm weight as {@code 1 + w} ({@link #normShift}).
 *
 * <p>HF → GGUF, as llama.cpp's converter ({@code Gemma2Model.set_gguf_parameters}) writes them and its
 * {@code gemma2} loader reads them: {@code attn_logit_softcapping}, {@code final_logit_softcapping},
 * {@code attention.sliding_window}. Refused (llama.cpp would run the model differently): no {@code head_dim},
 * a query scale other than the one llama.cpp assumes ({@code 1/sqrt(head_dim)}, {@code 1/sqrt(hidden/heads)}
 * for the 46-layer 27B), a soft-cap that is null (llama.cpp always caps), no sliding window, layer types other
 * than alternating local/global, rope scaling, untied embeddings (llama.cpp's gemma2 has no output tensor),
 * an activation other than tanh-approximated GELU.
 *
 * <p>GGUF → HF: the inverse, with llama.cpp's defaults for absent keys (window 4096, caps 50 and 30, rope base
 * 10000); {@code config.json} also says {@code attn_implementation: "eager"}, which transformers honours, since
 * its default (sdpa) attention ignores the attention soft-cap (docs/SEMANTICS.md).
 */
public final class Gemma2 implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            Layers.SANDWICH_NORMS, Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("gemma2", List.of("Gemma2ForCausalLM"), List.of("gemma2"), LAYERS);
    private static final int PATTERN = 2;
    private static final int LAYERS_27B = 46;

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public float normShift() {
        return 1f;
    }

    @Override
    public List<GgufKv> tokenizerExtras(TokenizerTables.TokenizerModel model, int nVocab) {
        return GemmaVocab.extras(model);
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode c, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        GemmaVocab.checkCommon("gemma2", c);
        GemmaVocab.checkQueryScalar("gemma2", c, d.layers() == LAYERS_27B ? d.hidden() / d.heads() : d.headDim());
        List<GgufKv> out = new ArrayList<>();
        for (String cap : List.of("attn_logit_softcapping", "final_logit_softcapping")) {
            JsonNode v = c.path(cap);
            if (!v.isNumber() || v.doubleValue() <= 0) {
                throw new IllegalArgumentException("gemma2 " + cap + " = " + v + " (llama.cpp always soft-caps)");
            }
            out.add(new GgufKv(p + cap, GgufValueType.FLOAT32, (float) v.doubleValue(), 0, 0));
        }
        JsonNode window = c.path("sliding_window");
        if (!window.isIntegralNumber() || window.intValue() <= 0) {
            throw new IllegalArgumentException("gemma2 sliding_window " + window + " is not a positive integer");
        }
        out.add(new GgufKv(p + "attention.sliding_window", GgufValueType.UINT32, window.intValue(), 0, 0));
        JsonNode types = c.path("layer_types");
        for (int i = 0; types.isArray() && i < types.size(); i++) {
            if (!types.get(i).asText().equals(layerType(i))) {
                throw new IllegalArgumentException("gemma2 layer_types[" + i + "] is " + types.get(i)
                        + ", llama.cpp's fixed pattern has " + layerType(i));
            }
        }
        if (types.isArray() && types.size() != d.layers()) {
            throw new IllegalArgumentException("gemma2 layer_types has " + types.size() + " entries, not " + d.layers());
        }
        return out;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        GemmaVocab.completeCommon(c);
        ArrayNode types = c.putArray("layer_types");
        for (int i = 0; i < layers; i++) {
            types.add(layerType(i));
        }
        c.put("sliding_window", (int) (long) m.integer(p + "attention.sliding_window", 4096L));
        c.put("query_pre_attn_scalar", layers == LAYERS_27B ? hidden / heads : headDim);
        c.put("attn_logit_softcapping", GemmaVocab.shortest(m.real(p + "attn_logit_softcapping", 50.0)));
        c.put("final_logit_softcapping", GemmaVocab.shortest(m.real(p + "final_logit_softcapping", 30.0)));
        c.put("attn_implementation", "eager");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        Long pattern = m.integer(p + "attention.sliding_window_pattern", (long) PATTERN);
        if (pattern != PATTERN) {
            throw new IllegalArgumentException(p + "attention.sliding_window_pattern = " + pattern + " (transformers' Gemma 2 alternates)");
        }
    }

    private static String layerType(int i) {
        return (i + 1) % PATTERN != 0 ? "sliding_attention" : "full_attention";
    }
}
