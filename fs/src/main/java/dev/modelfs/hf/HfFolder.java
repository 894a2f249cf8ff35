package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.ArchSpec;
import dev.modelfs.arch.Architecture;
import dev.modelfs.arch.ConfigKeys;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.arch.TensorNames;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Hugging Face folder of a GGUF model (docs/SEMANTICS.md "Hugging Face folder of GGUF models"):
 * {@code config.json} and {@code generation_config.json} rebuilt from the metadata, the tokenizer
 * files (absent, with {@link #tokenizerProblem()}, when the vocabulary cannot be expressed), and the
 * tensors under their HF names in HF row order (inverse of docs/FORMATS.md §7.2/§7.3).
 *
 * <p>Invariants: built only for a supported {@code general.architecture} whose every tensor has an HF
 * name or is one the architecture leaves out ({@code ArchSpec.hfLeavesOut}: mllama's vision tower) (else {@link #of}
 * throws {@link HfUnsupported} with the reason); tensor names are unique;
 * {@code lm_head.weight} is absent exactly when {@code output.weight} is, and then
 * {@code tie_word_embeddings} is true. {@code sentenceTransformers} maps the sentence-transformers files (path in the
 * folder → bytes, {@link SentenceTransformerFiles}) of an embedding model, and is empty for any other; {@code chatTemplate}
 * is where {@code tokenizer_config.json}'s {@code chat_template} came from, or why there is none. Small JSON files
 * only; no tensor data is read.
 */
public record HfFolder(Architecture arch, byte[] config, byte[] generationConfig, byte[] tokenizerJson,
                       byte[] tokenizerConfig, byte[] specialTokensMap, String tokenizerProblem, List<HfTensor> tensors,
                       Map<String, byte[]> sentenceTransformers, ChatTemplate chatTemplate) {

    /** GGUF tensors with no HF counterpart that are left out (HF recomputes them). */
    static final String ROPE_FREQS = "rope_freqs.weight";
    /**
     * The small F32 vectors whose values the folder's {@code config.json} is rebuilt from (read from the blob by
     * the caller): Llama 3.x {@code rope_freqs}, Phi-3 LongRoPE {@code rope_factors_long/short}; none of them is an
     * HF tensor.
     */
    public static final List<String> VECTORS = List.of(ROPE_FREQS, "rope_factors_long.weight", "rope_factors_short.weight");
    /** The transformers version whose config.json conventions the rebuilt config follows. */
    static final String CONFIG_FORMAT = "4.56.0";
    private static final Set<String> DROPPED = Set.copyOf(VECTORS);

    /** {@link #of(GgufFile, Map)} for a model without any of the {@link #VECTORS} (or without their values). */
    public static HfFolder of(GgufFile g) {
        return of(g, Map.of());
    }

    /**
     * The folder of {@code g}; {@code vectors}: the values of those of its {@link #VECTORS} that could be read
     * (Llama 3.x {@code rope_freqs}, Phi-3 LongRoPE factors), by GGUF name.
     */
    public static HfFolder of(GgufFile g, Map<String, float[]> vectors) {
        return of(g, vectors, null);
    }

    /**
     * The folder of {@code g} with its {@link #VECTORS} {@code vectors}, whose {@code tokenizer_config.json} carries
     * the GGUF's chat template or, without one, {@code ollamaTemplate} (the model's Ollama template layer, or null)
     * translated to Jinja ({@link ChatTemplate}).
     */
    public static HfFolder of(GgufFile g, Map<String, float[]> vectors, String ollamaTemplate) {
        return of(g, vectors, ollamaTemplate, Map.of());
    }

    /**
     * {@link #of(GgufFile, Map, String)} for a translated header whose tensors named in {@code concatenations} are
     * computed: each the rows of the listed blob tensors one after another ({@link HfAssemblies#concatenation}; Ollama's
     * GLM-OCR gate and up halves fused into llama.cpp's {@code ffn_up}, docs/FORMATS.md §12.15).
     */
    public static HfFolder of(GgufFile g, Map<String, float[]> vectors, String ollamaTemplate,
                              Map<String, List<GgufTensorInfo>> concatenations) {
        try {
            return build(g, vectors == null ? Map.of() : vectors, ollamaTemplate, concatenations);
        } catch (IllegalArgumentException e) {   // an architecture's refusal (ArchSpec)
            throw new HfUnsupported(e.getMessage());
        }
    }

    /**
     * The class {@code config.json} names ({@code architectures[0]}): the architecture's canonical one, or the text class a
     * vision-language GGUF's text model is written as ({@code Qwen2ForCausalLM} for {@code qwen2vl} ...).
     */
    public String hfArchitecture() {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(config).path("architectures").path(0).asText(arch.hfArchitecture());
        } catch (java.io.IOException e) {
            return arch.hfArchitecture();
        }
    }

    /**
     * This folder with the Ollama template unreadable ({@code reason}): unchanged when the GGUF has its own
     * template or there is no tokenizer, else without a chat template and with the reason.
     */
    public HfFolder withUnreadableTemplate(String reason) {
        if (tokenizerConfig == null || chatTemplate.jinja() != null) {
            return this;
        }
        return new HfFolder(arch, config, generationConfig, tokenizerJson, tokenizerConfig, specialTokensMap, tokenizerProblem,
                tensors, sentenceTransformers, new ChatTemplate(null, null, "the Ollama template layer cannot be read: " + reason));
    }

    private static HfFolder build(GgufFile g, Map<String, float[]> vectors, String ollamaTemplate,
                                  Map<String, List<GgufTensorInfo>> concatenations) {
        GgufMeta m = new GgufMeta(g, vectors);
        float[] ropeFreqs = m.f32Vector(ROPE_FREQS);
        String archName = m.string("general.architecture", null);
        if (archName == null) {
            throw new HfUnsupported("no general.architecture");
        }
        Architecture arch = Architecture.fromGguf(archName, m).orElseThrow(() -> new HfUnsupported(unsupported(archName)));
        ArchSpec spec = arch.spec();
        Map<String, GgufKv> kvs = new HashMap<>();
        g.kvs().forEach(kv -> kvs.put(kv.key(), kv));
        String p = arch.ggufName() + ".";
        GgufTensorInfo embd = g.tensor("token_embd.weight");
        if (embd == null || embd.rank() != 2) {
            throw new HfUnsupported("no 2-D token_embd.weight");
        }
        int heads = positive(m, p + "attention.head_count");
        String kvKey = p + "attention.head_count_kv";   // an array (Gemma 4's per-layer counts) only where the architecture maps one
        int[] kvArray = m.isArray(kvKey) && spec.mapsArrayKv("attention.head_count_kv") ? m.ints(kvKey) : null;
        int headsKv = kvArray != null && kvArray.length > 0 ? kvArray[0] : (int) (long) m.integer(kvKey, (long) heads);
        int hidden = positive(m, p + "embedding_length");
        int headDim = spec.headDim(m, p, hidden, heads);
        spec.checkGguf(m, p);
        List<HfTensor> tensors = tensors(g, arch, m, heads, headsKv, spec.positionRowsCut(m), concatenations);
        ObjectNode ropeScaling = g.tensor(ROPE_FREQS) == null ? null : spec.ropeScalingOf(m, ropeFreqs, headDim);

        GgufVocab vocab = null;
        String tokProblem = null;
        byte[] tokJson = null, tokConfig = null, specialMap = null;
        Long ctx = m.integer(p + "context_length", null);
        ChatTemplate chat = ChatTemplate.NONE;
        try {
            vocab = GgufVocab.read(g);
            tokJson = tokenizerJson(vocab, g);
            if (EncoderTokenizerFiles.handles(vocab)) {            // an embedding model: no chat template
                tokConfig = EncoderTokenizerFiles.tokenizerConfig(vocab, g, ctx);
                specialMap = EncoderTokenizerFiles.specialTokensMap(vocab, g);
            } else {
                chat = ChatTemplate.choose(vocab.chatTemplate(), ollamaTemplate);
                tokConfig = TokenizerFiles.tokenizerConfig(vocab, ctx, chat.jinja());
                specialMap = TokenizerFiles.specialTokensMap(vocab);
            }
        } catch (HfUnsupported e) {
            tokProblem = e.getMessage();
            vocab = null;
            chat = ChatTemplate.NONE;
        }

        ObjectNode c = ConfigKeys.toHf(arch, kvs);
        if (ropeScaling != null) {
            c.set("rope_scaling", ropeScaling);
        }
        c.put("vocab_size", embd.shape()[0]);
        if (!spec.encoder()) {   // an encoder's config is the common entries and its own (ArchSpec.encoder)
            c.put("head_dim", headDim);
            if (!c.has("num_key_value_heads")) {
                c.put("num_key_value_heads", headsKv);
            }
            c.put("hidden_act", "silu");
            c.put("tie_word_embeddings", g.tensor("output.weight") == null);
            c.put("attention_bias", g.tensor("blk.0.attn_q.bias") != null);
        } else {
            c.remove("num_key_value_heads");
        }
        spec.completeHfConfig(c, m, p, hidden, heads, headDim);
        ObjectNode gen = JsonNodeFactory.instance.objectNode();
        if (vocab != null) {
            for (String[] f : new String[][] {{"bos_token_id", "b"}, {"eos_token_id", "e"}, {"pad_token_id", "p"}}) {
                Integer id = switch (f[1]) {
                    case "b" -> vocab.bos();
                    case "e" -> StopTokens.eos(vocab, spec.hfStopTokens());   // gpt-oss's <|return|>, as its published config
                    default -> vocab.pad();
                };
                if (id != null) {
                    c.put(f[0], id);
                    gen.put(f[0], id);
                } else {
                    c.putNull(f[0]);   // not the config class's default (Phi3Config's bos is 1)
                }
            }
            StopTokens.put(gen, vocab, spec.hfStopTokens());   // gpt-oss's <|return|> and <|call|> beside the eos
        }
        // the config.json format written is transformers 4.x's (torch_dtype, rope_scaling), which 5.x reads;
        // without a version, transformers 5 warns that the tokenizer may have Mistral's broken regex
        c.put("transformers_version", CONFIG_FORMAT);
        c.put("torch_dtype", switch ((int) (long) m.integer("general.file_type", 0L)) {
            case 1 -> "float16";
            case 32 -> "bfloat16";
            default -> "float32";
        });
        Map<String, byte[]> st = SentenceTransformerFiles.of(arch, m, p, hidden, ctx);
        return new HfFolder(arch, TokenizerFiles.write(spec.hfConfigFile(c)), TokenizerFiles.write(gen), tokJson, tokConfig, specialMap,
                tokProblem, List.copyOf(tensors), st, chat);
    }

    private static List<HfTensor> tensors(GgufFile g, Architecture arch, GgufMeta m, int heads, int headsKv, long positionRowsCut,
                                          Map<String, List<GgufTensorInfo>> concatenations) {
        HfAssemblies.Result assembled = HfAssemblies.of(g, arch);
        List<HfTensor> out = new ArrayList<>(assembled.tensors());
        String p = arch.ggufName() + ".";
        for (GgufTensorInfo t : g.tensors()) {
            if (DROPPED.contains(t.name()) || assembled.consumed().contains(t.name()) || arch.spec().hfLeavesOut(t.name(), m, p)) {
                continue;
            }
            var layout = arch.spec().hfLayout(t.name(), t.ne(), m, p);
            if (layout.isPresent()) {   // values or layout the architecture changes (Qwen 3.5's gated delta-net)
                out.add(HfTensor.of(layout.get(), t));
                continue;
            }
            if (concatenations.containsKey(t.name())) {
                out.add(HfAssemblies.concatenation(arch, t, concatenations.get(t.name())));
                continue;
            }
            long[] shape = t.shape();
            long rows = t.rank() <= 1 ? (t.rank() == 0 ? 1 : t.ne()[0]) : t.elements() / t.ne()[0];
            List<String> qkv = TensorNames.splitQkv(arch, t.name());
            if (!qkv.isEmpty()) {   // q, k, v: equal thirds of the rows (an encoder's fused attn_qkv)
                if (t.rank() > 2 || rows % 3 != 0) {
                    throw new HfUnsupported("GGUF tensor " + t.name() + " " + java.util.Arrays.toString(shape) + " is not three equal parts");
                }
                long part = t.byteSize() / 3;
                for (int i = 0; i < 3; i++) {
                    long[] s = shape.clone();
                    s[0] = rows / 3;
                    out.add(new HfTensor(qkv.get(i), t, s, i * part, part, rows / 3, null));
                }
                continue;
            }
            if (positionRowsCut > 0 && t.name().equals("position_embd.weight") && t.rank() == 2) {
                String name = TensorNames.toHf(arch, t.name()).orElseThrow();
                out.add(new HfTensor(name, t, new long[] {shape[0] + positionRowsCut, shape[1]}, 0, t.byteSize(), rows, null, 0f,
                        positionRowsCut));
                continue;
            }
            if (TensorNames.expertSlice(arch, t.name(), 0).isPresent() && t.rank() == 3) {
                long experts = t.ne()[2];
                long per = t.byteSize() / experts;
                for (int e = 0; e < experts; e++) {
                    TensorNames.ExpertSlice s = TensorNames.expertSlice(arch, t.name(), e).orElseThrow();
                    out.add(new HfTensor(s.hfName(), t, new long[] {shape[1], shape[2]}, e * per, per, shape[1], null));
                }
                continue;
            }
            String name = TensorNames.toHf(arch, t.name()).orElseThrow(
                    () -> new HfUnsupported("GGUF tensor " + t.name() + " has no Hugging Face name for " + arch.ggufName()));
            var which = TensorNames.permutation(arch, t.name());
            if (which.isPresent()) {
                if (t.rank() == 1) {
                    QkPermutation q = QkPermutation.of(which.get(), heads, headsKv, Math.toIntExact(t.ne()[0]));
                    out.add(new HfTensor(name, t, shape, 0, t.byteSize(), t.ne()[0], order(arch, q)));
                } else if (t.rank() == 2) {
                    QkPermutation q = QkPermutation.of(which.get(), heads, headsKv, Math.toIntExact(t.ne()[1]));
                    out.add(new HfTensor(name, t, shape, 0, t.byteSize(), t.ne()[1], order(arch, q)));
                } else {
                    throw new HfUnsupported("GGUF tensor " + t.name() + " has " + t.rank() + " dimensions");
                }
                continue;
            }
            float shift = TensorNames.storedShift(arch, t.name());
            if (shift != 0 && (t.type() != dev.modelfs.format.gguf.GgmlType.F32 || t.rank() != 1)) {
                throw new HfUnsupported("GGUF tensor " + t.name() + " is " + t.type() + " of " + t.rank()
                        + " dimensions: only a 1-D F32 " + arch.ggufName() + " norm weight can be shifted back by " + shift);
            }
            out.add(new HfTensor(name, t, shape, 0, t.byteSize(), rows, null, shift == 0 ? 0f : -shift));
        }
        for (var c : arch.spec().hfConstants(m, p)) {   // tensors the GGUF leaves out, as the runtimes take them (ones)
            GgufTensorInfo like = g.tensor(c.dtypeOf());
            if (like == null) {
                throw new HfUnsupported("GGUF has no " + c.dtypeOf() + " (the dtype of Hugging Face's " + c.hf() + ")");
            }
            out.add(HfTensor.filled(c.hf(), like, c.shape(), c.value()));
        }
        return out;
    }

    /** The HF row order of a permuted q/k tensor: the inverse of llama's permutation, or of GLM's ({@link ArchSpec#permutationReversed}). */
    private static QkPermutation.Order order(Architecture arch, QkPermutation q) {
        return arch.spec().permutationReversed() ? q.ggufOrder() : q.hfOrder();
    }

    /**
     * {@code tokenizer.json} of GGUF header {@code g}: the rebuilt file's bytes ({@link EncoderTokenizerFiles} for an
     * encoder vocabulary, else {@link TokenizerFiles}).
     */
    public static byte[] tokenizerJsonOf(GgufFile g) {
        return tokenizerJson(GgufVocab.read(g), g);
    }

    private static byte[] tokenizerJson(GgufVocab v, GgufFile g) {
        return EncoderTokenizerFiles.handles(v) ? EncoderTokenizerFiles.tokenizerJson(v, g) : TokenizerFiles.tokenizerJson(v);
    }

    private static int positive(GgufMeta m, String key) {
        Long v = m.integer(key, null);
        if (v == null || v <= 0 || v > Integer.MAX_VALUE) {
            throw new HfUnsupported(key + (v == null ? " is missing" : " = " + v + " is not a positive 32-bit integer"));
        }
        return v.intValue();
    }

    static String unsupported(String arch) {
        if (arch.startsWith("gemma")) {
            return "general.architecture " + arch + " is not supported: of llama.cpp's gemma architectures gemma, gemma2, "
                    + "gemma3 and gemma4 (text) are mapped; the others change values in their own ways, which modelfs does not undo";
        }
        return "general.architecture " + arch + " is not supported (supported: "
                + String.join(", ", java.util.Arrays.stream(Architecture.values()).map(Architecture::ggufName).distinct().toList()) + ")";
    }
}
