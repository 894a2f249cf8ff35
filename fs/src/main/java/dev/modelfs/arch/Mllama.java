package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The text model of Llama 3.2 Vision (GGUF {@code mllama}, written only by Ollama's {@code convert/convert_mllama.go};
 * upstream llama.cpp has no such architecture), GGUF → Hugging Face only, as a {@code MllamaForCausalLM} folder
 * (docs/FORMATS.md §7.3, §12.7). Its layers are llama's self-attention layers and, at the indices of
 * {@code mllama.attention.cross_attention_layers}, cross-attention layers: {@code cross_attn.{q,k,v,o}_proj}
 * ({@code blk.N.cross_attn_{q,k,v,o}_proj}), the per-head {@code cross_attn.{q,k}_norm}, and the two scalar tanh gates
 * {@code cross_attn_attn_gate} and {@code cross_attn_mlp_gate}, stored as the checkpoint holds them (no suffix, the
 * tanh applied at run time). Ollama's converter permutes the rows of {@code attn_q}/{@code attn_k} and, because their
 * names end alike, of {@code cross_attn_q_proj}/{@code cross_attn_k_proj} too (llama's interleaved-rope order, query and
 * key heads): all four are permuted back. The vision tower and projector ({@code v.*}, {@code mm.*}) are left out of
 * the folder; transformers' {@code MllamaForCausalLM} has none.
 *
 * <p>config.json: {@code MllamaForCausalLM}, {@code model_type: mllama} with the text model's {@code MllamaTextConfig} fields
 * ({@code model_type: mllama_text_model}) under {@code text_config} ({@link #hfConfigFile}: transformers' own flat
 * {@code MllamaTextConfig} file loads in {@code MllamaForCausalLM} but not in {@code AutoModelForCausalLM}); {@code vocab_size} is {@code output.weight}'s rows
 * ({@code token_embd.weight} has 8 more, transformers' {@code vocab_size + 8} embedding rows, which the
 * {@code <|image|>} token's id falls in); {@code cross_attention_layers} from the layers that hold cross-attention tensors,
 * which must equal the GGUF's list when it has one; Llama 3.x rope scaling recovered from {@code rope_freqs.weight}
 * as for llama. Refused: no {@code output.weight} (tied embeddings cannot be: the two differ in rows), an embedding of
 * other than {@code vocab_size + 8} rows, a head dimension or rotary dimension other than {@code hidden / heads}
 * (transformers' only one), and the synthesized GGUF (Hugging Face → GGUF: llama.cpp could not run it).
 */
public final class Mllama implements ArchSpec {
    /** The embedding rows transformers' {@code MllamaTextModel} has beyond {@code vocab_size}. */
    static final int EXTRA_EMBEDDING_ROWS = 8;
    private static final List<LayerRule> CROSS_ATTENTION = List.of(
            new LayerRule("cross_attn.q_proj", "cross_attn_q_proj", d -> new long[]{Layers.q(d), d.hidden()}),
            new LayerRule("cross_attn.k_proj", "cross_attn_k_proj", d -> new long[]{Layers.kv(d), d.hidden()}),
            new LayerRule("cross_attn.v_proj", "cross_attn_v_proj", d -> new long[]{Layers.kv(d), d.hidden()}),
            new LayerRule("cross_attn.o_proj", "cross_attn_o_proj", d -> new long[]{d.hidden(), Layers.q(d)}),
            new LayerRule("cross_attn.q_norm", "cross_attn_q_norm", d -> new long[]{d.headDim()}),
            new LayerRule("cross_attn.k_norm", "cross_attn_k_norm", d -> new long[]{d.headDim()}));
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION, CROSS_ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("mllama", List.of("MllamaForCausalLM", "MllamaForConditionalGeneration"),
            List.of("mllama_text_model", "mllama"), LAYERS);
    /** The tanh gates of a cross-attention layer: one F32 each, named alike in the checkpoint and in Ollama's GGUF. */
    private static final List<Assembly> GATES = List.of(
            Assembly.renamed("cross_attn_attn_gate", "cross_attn_attn_gate", Assembly.Layout.VECTOR),
            Assembly.renamed("cross_attn_mlp_gate", "cross_attn_mlp_gate", Assembly.Layout.VECTOR));

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public Optional<QkPermutation.Which> qkPermutation(String gguf) {
        return switch (gguf) {
            case "cross_attn_q_proj" -> Optional.of(QkPermutation.Which.Q);
            case "cross_attn_k_proj" -> Optional.of(QkPermutation.Which.K);
            default -> ArchSpec.super.qkPermutation(gguf);
        };
    }

    @Override
    public List<Assembly> assemblies() {
        return GATES;
    }

    @Override
    public boolean hfLeavesOut(String ggufName, GgufParams m, String p) {
        return ggufName.startsWith("v.") || ggufName.startsWith("mm.");
    }

    @Override
    public void checkHfConfig(JsonNode config) {
        throw new IllegalArgumentException("mllama: modelfs maps Ollama's mllama GGUFs to Hugging Face MllamaForCausalLM folders only; "
                + "a Hugging Face Llama 3.2 Vision model gets no GGUF (upstream llama.cpp has no mllama)");
    }

    @Override
    public void checkGguf(GgufParams m, String p) {
        int hidden = (int) (long) m.integer(p + "embedding_length", 0L), heads = (int) (long) m.integer(p + "attention.head_count", 1L);
        int headDim = heads > 0 ? hidden / heads : 0;
        for (String k : List.of("attention.key_length", "attention.value_length", "rope.dimension_count")) {
            long v = m.integer(p + k, (long) headDim);
            if (v != headDim) {
                throw new IllegalArgumentException(p + k + " = " + v + ": transformers' MllamaForCausalLM has head dimension and rotary "
                        + "dimension hidden / heads = " + headDim);
            }
        }
        long[] out = m.ne("output.weight"), embd = m.ne("token_embd.weight");
        if (out == null || out.length != 2) {
            throw new IllegalArgumentException("mllama without a 2-D output.weight: MllamaForCausalLM's lm_head has "
                    + EXTRA_EMBEDDING_ROWS + " rows fewer than its embedding and cannot be tied to it");
        }
        if (embd == null || embd.length != 2 || embd[1] != out[1] + EXTRA_EMBEDDING_ROWS) {
            throw new IllegalArgumentException("mllama token_embd.weight has " + (embd == null || embd.length != 2 ? "no 2-D shape" : embd[1] + " rows")
                    + ", not output.weight's " + out[1] + " + " + EXTRA_EMBEDDING_ROWS + " (MllamaTextModel's embedding)");
        }
        int[] declared = m.ints(p + "attention.cross_attention_layers");
        int[] found = crossAttentionLayers(m, p);
        if (declared != null && !Arrays.equals(Arrays.stream(declared).sorted().toArray(), found)) {
            throw new IllegalArgumentException(p + "attention.cross_attention_layers " + Arrays.toString(declared)
                    + " are not the layers holding cross-attention tensors " + Arrays.toString(found));
        }
    }

    @Override
    public ObjectNode ropeScalingOf(GgufParams m, float[] freqs, int headDim) {
        return Llama.llama3ScalingOf(m, ggufName() + ".", freqs, headDim);
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        c.put("vocab_size", m.ne("output.weight")[1]);
        ArrayNode cross = c.putArray("cross_attention_layers");
        for (int layer : crossAttentionLayers(m, p)) {
            cross.add(layer);
        }
        c.remove(List.of("head_dim", "attention_bias"));   // not MllamaTextConfig fields: its head dimension is hidden / heads
    }

    @Override
    public ObjectNode hfConfigFile(ObjectNode c) {
        ObjectNode text = c.deepCopy();
        ObjectNode top = JsonNodeFactory.instance.objectNode();
        top.set("architectures", text.remove("architectures"));
        top.put("model_type", "mllama");
        top.set("text_config", text);
        for (String f : List.of("transformers_version", "torch_dtype")) {
            if (text.has(f)) {
                top.set(f, text.remove(f));
            }
        }
        return top;
    }

    /** The layers holding cross-attention tensors ({@code blk.N.cross_attn_q_proj.weight}), ascending. */
    private static int[] crossAttentionLayers(GgufParams m, String p) {
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        return java.util.stream.IntStream.range(0, Math.max(layers, 0))
                .filter(i -> m.hasTensor("blk." + i + ".cross_attn_q_proj.weight")).toArray();
    }
}
