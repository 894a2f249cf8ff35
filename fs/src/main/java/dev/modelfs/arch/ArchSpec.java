package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import java.util.List;
import java.util.Optional;

/**
 * Everything one LLM architecture means to modelfs, in both directions (Hugging Face safetensors →
 * synthesized GGUF, GGUF → Hugging Face folder): tensor names and shapes, row order, norm shifts, the
 * {@code config.json} fields beyond the common ones, rope, and the checks that refuse what llama.cpp
 * or transformers would run differently. One class per architecture; {@link Architecture} is the
 * closed list of them, and no code outside this package asks which architecture it has.
 *
 * <p>Invariants: {@link #ggufName()} is llama.cpp's {@code LLM_ARCH} name; two specs share it only when
 * {@link #claims} tells them apart (Mixtral is llama with experts). The HF names of {@link #tables()} are
 * non-empty, their first element canonical, and disjoint between architectures. {@link #layers()} names
 * every per-layer tensor llama.cpp requires (in every layer, unless {@link #requiredInLayer} says otherwise), each once per GGUF name and once per HF name (an encoder's fused
 * {@code attn_qkv}, which the HF side splits, is named by {@link #splitQkv()} instead). Methods that
 * refuse throw {@link IllegalArgumentException} with a one-line reason. Implementations are stateless.
 */
public sealed interface ArchSpec permits Llama, Mixtral, Qwen2, Qwen2Moe, Qwen3, Qwen3Moe, Phi3, Gemma3,
        Gemma, Gemma2, Olmo2, GraniteMoe, Bert, XlmRoberta, NomicBert, GptOss, Deepseek2,
        Gemma4,
        Qwen2Vl, Qwen3Vl, Mistral3,
        Mllama, Qwen35Family, Qwen3VlMoe, GlmOcr {

    /**
     * The architecture's tables: {@code gguf} is {@code general.architecture} (also the prefix of its GGUF
     * keys); {@code hfArchitectures} the HF {@code architectures[0]} values and {@code hfModelTypes} the
     * {@code model_type} values, non-empty, the first of each canonical; {@code layers} the per-layer
     * tensors in llama.cpp's order, each required in every layer.
     */
    record Tables(String gguf, List<String> hfArchitectures, List<String> hfModelTypes, List<LayerRule> layers) {
    }

    /** The tables of this architecture. */
    Tables tables();

    /** {@code general.architecture}; also the prefix of the architecture's GGUF keys. */
    default String ggufName() {
        return tables().gguf();
    }

    /** The per-layer tensors, in llama.cpp's order. */
    default List<LayerRule> layers() {
        return tables().layers();
    }

    /**
     * The HF name of every per-layer tensor is {@code <hfLayerPrefix>N.<rule.hf>.(weight|bias)}: {@code model.layers.}
     * for the causal LMs, the encoder's own prefix for {@link #encoder()} models ({@code encoder.layer.} for BERT).
     */
    default String hfLayerPrefix() {
        return "model.layers.";
    }

    /** The tensors outside the layers, as {@code {HF name, GGUF name}} pairs without suffix (FORMATS.md §7.3). */
    default List<String[]> globals() {
        return List.of(new String[] {"model.embed_tokens", "token_embd"}, new String[] {"model.norm", "output_norm"},
                new String[] {"lm_head", "output"});
    }

    /**
     * The three HF names (without layer prefix and suffix) of q, k and v when a GGUF stores them fused as
     * {@code blk.N.attn_qkv} and the HF model keeps them apart (equal thirds of the rows: encoders have no
     * grouped-query attention); empty when {@code attn_qkv} is not split (phi3 keeps it fused).
     */
    default List<String> splitQkv() {
        return List.of();
    }

    /**
     * Whether this is an encoder (an embedding model: bidirectional, no {@code lm_head}). Its {@code config.json}
     * is written by {@link #completeHfConfig} over the common entries, and only the GGUF → HF direction is mapped
     * ({@link Architecture#fromHf} refuses it: no synthesized GGUF).
     */
    default boolean encoder() {
        return false;
    }

    /**
     * Rows llama.cpp's converter cut from the front of {@code position_embd.weight} (XLM-RoBERTa's unused
     * positions); the HF tensor has that many zero rows first. 0 by default.
     */
    default long positionRowsCut(GgufParams m) {
        return 0;
    }

    /** Per-layer GGUF tensors (names as in {@link LayerRule#gguf}) that must also have a {@code .bias}. */
    default List<String> requiredBiases() {
        return List.of();
    }

    /** The experts, for a mixture-of-experts architecture. */
    default Optional<Experts> experts() {
        return Optional.empty();
    }

    /**
     * Per-layer HF tensors assembled from several GGUF tensors (gpt-oss's fused experts, DeepSeek's {@code kv_b_proj},
     * GraniteMoe's {@code input_linear}), the one mechanism for an HF tensor made of several GGUF ones. Their GGUF
     * tensors map to no other HF name; most have no {@link LayerRule} (GGUF → Hugging Face only). A {@link
     * Assembly#isRowSplit row split} may have a rule per part, naming the assembly's HF tensor: those give the
     * Hugging Face → GGUF direction, each part the same rows of every batch ({@link TensorNames#splitParts}).
     */
    default List<Assembly> assemblies() {
        return List.of();
    }

    /** Whether q/k rows are permuted between HF and GGUF (the interleaved rope of llama, FORMATS.md §7.2). */
    default boolean permutesQk() {
        return false;
    }

    /**
     * Which heads the rows of per-layer GGUF tensor {@code gguf} (without {@code blk.N.} and suffix) are permuted over
     * when {@link #permutesQk()}: {@code attn_q} over the query heads, {@code attn_k} over the key heads, nothing else by
     * default (mllama's cross-attention {@code cross_attn_q_proj} / {@code cross_attn_k_proj} as well).
     */
    default Optional<QkPermutation.Which> qkPermutation(String gguf) {
        return switch (gguf) {
            case "attn_q" -> Optional.of(QkPermutation.Which.Q);
            case "attn_k" -> Optional.of(QkPermutation.Which.K);
            default -> Optional.empty();
        };
    }

    /**
     * Whether the {@link #permutesQk} permutation runs the other way: llama.cpp's converter moved the interleaved rope
     * pairs of the Hugging Face rows into NeoX halves (GLM's {@code normal_to_neox}, for M-RoPE), the inverse of llama's,
     * so the GGUF → HF direction applies {@link QkPermutation#ggufOrder()}. Only GGUF → HF architectures set it.
     */
    default boolean permutationReversed() {
        return false;
    }

    /** What llama.cpp's converter adds to every norm weight ({@code *norm.weight}); the HF value is {@code stored - normShift}. */
    default float normShift() {
        return 0f;
    }

    /**
     * Whether this architecture writes rope scaling of {@code type} itself ({@link #extraKvs}, {@link #computedTensors}),
     * so that {@link ConfigKeys#toGguf} accepts the type (Phi-3's {@code longrope}); other unknown types are refused.
     */
    default boolean writesRopeScaling(String type) {
        return false;
    }

    /** {@code config.json} ↔ GGUF entries of this architecture beyond {@link ConfigKeys#COMMON}, written after the norm epsilon. */
    default List<ConfigKeys.Entry> configEntries() {
        return List.of();
    }

    // ---- Hugging Face → GGUF (the synthesized GGUF)

    /** Refuses a {@code config.json} this architecture does not convert (checked before anything is read from it). */
    default void checkHfConfig(JsonNode config) {
    }

    /**
     * The architecture KVs written after the entries and before rope scaling (prefix {@code p} =
     * {@code "<ggufName>."}), given the ones {@code done} already written; may refuse the config.
     */
    default List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return List.of();
    }

    /** F32 tensors computed from {@code config.json} (llama3's {@code rope_freqs.weight}), given the KVs. */
    default List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        return List.of();
    }

    /** Refuses a {@code tokenizer.json} whose vocabulary llama.cpp's converter would cut differently. */
    default void checkTokenizer(JsonNode tokenizer, ConfigKeys.Dims d) {
    }

    /**
     * Tokenizer KVs llama.cpp's converter writes for this architecture beyond those the tokenizer files give
     * ({@code model} is the vocabulary's {@code tokenizer.ggml.model}, {@code nVocab} its size), docs/FORMATS.md §7.5.
     */
    default List<GgufKv> tokenizerExtras(TokenizerTables.TokenizerModel model, int nVocab) {
        return List.of();
    }

    /**
     * The HF shape {@code config.json} implies for the per-layer GGUF tensor {@code blk.<layer>.<gguf>.weight}
     * ({@code gguf} without layer prefix and suffix), empty when the architecture has none: by default its
     * {@link LayerRule}'s, the same in every layer. Gemma 4 overrides it (head dimensions per layer type, the
     * layer scalar of a renamed {@link Assembly}).
     */
    default Optional<long[]> layerShape(String gguf, int layer, JsonNode config, ConfigKeys.Dims d) {
        return layers().stream().filter(r -> r.gguf().equals(gguf)).findFirst().map(r -> r.shape().apply(d));
    }

    // ---- tensors and KVs not in every model of an architecture (Gemma 4's per-layer embeddings and KV sharing)

    /**
     * The HF shape {@code config.json} implies for a global GGUF tensor {@code gguf} (with suffix) other than
     * {@code token_embd}, {@code output} and {@code output_norm}; empty (the tensor is unexpected) by default.
     */
    default Optional<long[]> globalShape(String gguf, JsonNode config, ConfigKeys.Dims d) {
        return Optional.empty();
    }

    /** Global GGUF tensors (with suffix) llama.cpp requires besides {@code token_embd} and {@code output_norm}; none by default. */
    default List<String> requiredGlobals(JsonNode config) {
        return List.of();
    }

    /**
     * Whether GGUF KV {@code <ggufName>.<ggufSuffix>} of a {@link ConfigKeys} entry may be a per-layer ARRAY that
     * {@link #completeHfConfig} maps (Gemma 4's {@code feed_forward_length}); {@link ConfigKeys#toHf} refuses any other array.
     */
    default boolean mapsArrayKv(String ggufSuffix) {
        return false;
    }

    /**
     * The tokenizer KVs of the synthesized GGUF, given those {@link TokenizerKvs#of} derived ({@code kvs}, the
     * {@link #tokenizerExtras} included) from {@code tokenizer} and {@code tokenizerConfig} (null when absent): unchanged by
     * default. An architecture whose converter writes its own vocabulary form (Gemma 4's {@code tokenizer.ggml.model =
     * gemma4}) rewrites them.
     */
    default List<GgufKv> reviseTokenizerKvs(List<GgufKv> kvs, JsonNode tokenizer, JsonNode tokenizerConfig) {
        return kvs;
    }

    /**
     * A multimodal Hugging Face architecture whose text model is this architecture (Gemma 4 with vision and audio,
     * {@code Gemma4ForConditionalGeneration}): its text config is {@code config.json}'s object {@code configField}; its text
     * tensors are those under {@code tensorPrefix}, named as the text model's {@code model.} + the rest; tensors under one
     * of {@code dropped} (the vision and audio towers, which are {@code mmproj.gguf}'s, not {@code model.gguf}'s) are
     * left out; any other tensor keeps its name.
     */
    record TextPart(String hfArchitecture, String configField, String tensorPrefix, List<String> dropped) {
        public TextPart {
            dropped = List.copyOf(dropped);
        }

        /** The text model's name of tensor {@code hfName}, or null when it is left out. */
        public String textName(String hfName) {
            if (hfName.startsWith(tensorPrefix)) {
                return "model." + hfName.substring(tensorPrefix.length());
            }
            return dropped.stream().anyMatch(hfName::startsWith) ? null : hfName;
        }
    }

    /** The multimodal architectures whose text model is this one (Hugging Face → GGUF only); none by default. */
    default List<TextPart> textParts() {
        return List.of();
    }

    // ---- Hugging Face → GGUF: tensors llama.cpp's converter rewrites beyond names and types (Qwen 3.5, Qwen35Synth)

    /** Whether HF tensor {@code hfName} is left out of the synthesized GGUF (an MTP head llama.cpp's converter can leave out). */
    default boolean leftOut(String hfName) {
        return false;
    }

    /** The GGUF name of an HF tensor the name tables cannot spell (Qwen 3.5's suffix-less {@code ssm_a}); empty by default. */
    default Optional<String> otherGgufName(String hfName) {
        return Optional.empty();
    }

    /**
     * The GGUF tensors (with layer prefix and suffix, in row order) an HF tensor is cut into when the name tables cannot say
     * so: Qwen 3.5 MoE's fused experts {@code mlp.experts.gate_up_proj} ({@code [E, gate rows + up rows, hidden]}) into
     * {@code ffn_gate_exps} and {@code ffn_up_exps}, the same rows of every expert (as a row-split {@link Assembly}, but for
     * the Hugging Face → GGUF direction only); empty by default.
     */
    default Optional<List<String>> splitToGguf(String hfName) {
        return Optional.empty();
    }

    /** Whether norm weight {@code hfName} gets {@link #normShift()} (every {@code *norm.weight} by default). */
    default boolean shiftsNorm(String hfName) {
        return hfName.endsWith("norm.weight");
    }

    /**
     * What the converter does to per-layer GGUF tensor {@code gguf} ({@code blk.<layer>.}{@code gguf}, suffix included)
     * beyond name and type: rows or columns reordered, values mapped, shape squeezed; empty by default.
     */
    default Optional<TensorRewrite> rewrite(String gguf, int layer, JsonNode config) {
        return Optional.empty();
    }

    /**
     * The per-layer GGUF tensors (without {@code blk.N.}, with suffix) llama.cpp requires in layer {@code layer} of the model
     * {@code config} describes: by default every rule's weight and every {@link #requiredBiases required bias}. An architecture
     * whose layers depend on its config (Gemma 4's experts, {@link Gemma4Experts}, and shared KV layers, {@link Gemma4PerLayer}; Qwen 3.5's two layer types, {@link Qwen35Synth}) narrows or widens the list.
     */
    default List<String> requiredInLayer(int layer, JsonNode config) {
        List<String> out = new java.util.ArrayList<>();
        layers().forEach(r -> out.add(r.gguf() + ".weight"));
        requiredBiases().forEach(b -> out.add(b + ".bias"));
        return out;
    }

    /** One computed F32 tensor. */
    record ComputedTensor(String ggufName, float[] values) {
    }

    // ---- GGUF → Hugging Face (the Hugging Face folder of GGUF models)

    /** Whether a GGUF whose {@code general.architecture} is {@link #ggufName()} is this architecture. */
    default boolean claims(GgufParams m) {
        return true;
    }

    /** The head dimension of a GGUF model ({@code p} = {@code "<ggufName>."}). */
    default int headDim(GgufParams m, String p, int hidden, int heads) {
        return (int) (long) m.integer(p + "attention.key_length", m.integer(p + "rope.dimension_count", (long) hidden / heads));
    }

    /** Refuses a GGUF model whose features this mapping does not rebuild. */
    default void checkGguf(GgufParams m, String p) {
    }

    /**
     * The {@code rope_scaling} of {@code config.json} recovered from the GGUF's F32 {@code rope_freqs.weight}
     * values ({@code freqs}, null when unreadable); refuses by default.
     */
    default ObjectNode ropeScalingOf(GgufParams m, float[] freqs, int headDim) {
        throw new IllegalArgumentException("rope_freqs.weight (Llama 3.x rope scaling) in a " + ggufName() + " model");
    }

    /**
     * Whether GGUF tensor {@code ggufName} has no place in the Hugging Face folder and is left out: Qwen 3.5's and
     * GLM-OCR's MTP layers ({@link NextnLayers}), which transformers loads without; a vision tower stored in the same
     * file as the text model ({@code mllama}'s {@code v.*} and {@code mm.*}), which the text class does not have. None by default: any other tensor without a
     * Hugging Face name refuses the folder.
     */
    default boolean hfLeavesOut(String ggufName, GgufParams m, String p) {
        return false;
    }

    /**
     * The constant tensors the Hugging Face folder adds for tensors GGUF {@code m} does not hold ({@link HfConstant}); none by
     * default.
     */
    default List<HfConstant> hfConstants(GgufParams m, String p) {
        return List.of();
    }

    /**
     * The texts of the tokens that end generation, in the order the published {@code generation_config.json}'s
     * {@code eos_token_id} list has them (gpt-oss: {@code <|return|>}, {@code <|endoftext|>}, {@code <|call|>}); the folder
     * looks each up in the vocabulary by text (never a fixed id). Empty by default: the list is the GGUF's eos alone.
     */
    default List<String> hfStopTokens() {
        return List.of();
    }

    /**
     * The Hugging Face tensor of GGUF tensor {@code ggufName} ({@code ne} its GGUF dimensions) when this architecture
     * changes its values or layout beyond a rename and the {@link #normShift} (Qwen 3.5's gated delta-net: V heads
     * reordered, {@code A_log = log(-ssm_a)}), empty for the usual mapping (docs/FORMATS.md §7.3); may refuse the model.
     */
    default Optional<HfLayout> hfLayout(String ggufName, long[] ne, GgufParams m, String p) {
        return Optional.empty();
    }

    /**
     * Adds or replaces this architecture's fields of a rebuilt {@code config.json} {@code c}, which already has
     * the entries, {@code head_dim}, {@code num_key_value_heads}, {@code vocab_size}, {@code hidden_act},
     * {@code tie_word_embeddings} and {@code attention_bias}.
     */
    default void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
    }

    /**
     * The {@code config.json} written for the finished flat config {@code c} (the token ids, {@code transformers_version} and
     * {@code torch_dtype} included): {@code c} itself by default. mllama nests it as the {@code text_config} of a
     * {@code model_type: mllama} config, the only form transformers' {@code AutoModelForCausalLM} maps to
     * {@code MllamaForCausalLM}.
     */
    default ObjectNode hfConfigFile(ObjectNode c) {
        return c;
    }
}
