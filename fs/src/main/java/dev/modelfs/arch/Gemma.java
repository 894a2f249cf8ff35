package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Gemma 1 and CodeGemma ({@code GemmaForCausalLM}): two norms a layer, NeoX rope, tied embeddings, query scale
 * {@code 1/sqrt(head_dim)}; llama.cpp stores every norm weight as {@code 1 + w} ({@link #normShift}).
 *
 * <p>HF → GGUF as llama.cpp's converter ({@code GemmaModel}) writes it: no architecture keys beyond the common
 * ones; its vocabulary also gets {@code tokenizer.ggml.eot_token_id = 107} (the converter hard-codes Gemma's
 * {@code <end_of_turn>} id; written when the vocabulary has that id) and {@code add_space_prefix = false}.
 * Refused: no {@code head_dim}, rope scaling, untied embeddings, an activation other than tanh-approximated GELU.
 * GGUF → HF: {@code hidden_activation gelu_pytorch_tanh}, rope base 10000 when the GGUF has none.
 */
public final class Gemma implements ArchSpec {
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("gemma", List.of("GemmaForCausalLM"), List.of("gemma"), LAYERS);
    /** The id llama.cpp's converter writes as {@code eot_token_id} for every Gemma 1. */
    static final int EOT = 107;

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
        List<GgufKv> out = new ArrayList<>(GemmaVocab.extras(model));
        if (EOT < nVocab) {
            out.add(new GgufKv("tokenizer.ggml.eot_token_id", GgufValueType.UINT32, EOT, 0, 0));
        }
        return out;
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode c, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        GemmaVocab.checkCommon("gemma", c);
        return List.of();
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        GemmaVocab.completeCommon(c);
    }
}
