package dev.modelfs.arch;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The LLM architectures modelfs maps between Hugging Face ({@code config.json} {@code architectures}
 * / {@code model_type}) and GGUF ({@code general.architecture}), docs/FORMATS.md §7.3: the closed list of
 * {@link ArchSpec}s, one class each, which hold everything the architecture means.
 *
 * <p>Invariants: {@link #hfArchitectures()} and {@link #hfModelTypes()} are non-empty and disjoint between
 * constants; their first element is the canonical name written in the GGUF → HF direction
 * ({@code fromHf(hfArchitectures().getFirst(), ...)} gives back the constant). Constants sharing a
 * {@link #ggufName()} (llama and Mixtral) are told apart by {@link ArchSpec#claims}.
 */
public enum Architecture {
    /** Llama 1/2/3.x and Mistral-style llama ({@code MistralForCausalLM}, same tensors). */
    LLAMA(new Llama()),
    /** Mixtral: llama with a mixture of experts ({@code general.architecture} llama, experts > 0). */
    MIXTRAL(new Mixtral()),
    /** Qwen2 / Qwen2.5 (q/k/v biases, NeoX RoPE). */
    QWEN2(new Qwen2()),
    /** Qwen2 MoE (Qwen2 attention, routed and shared experts). */
    QWEN2MOE(new Qwen2Moe()),
    /** Qwen3 dense (q_norm/k_norm, no biases, NeoX RoPE). */
    QWEN3(new Qwen3()),
    /** Qwen3 MoE (stacked experts, router {@code ffn_gate_inp}). */
    QWEN3MOE(new Qwen3Moe()),
    /** Phi-3 / Phi-4 mini: fused {@code qkv_proj} and {@code gate_up_proj}, NeoX RoPE. */
    PHI3(new Phi3()),
    /** Gemma 3 text ({@code Gemma3ForCausalLM}): norm weights stored as {@code 1 + w}. */
    GEMMA3(new Gemma3()),
    /** Gemma 1 and CodeGemma ({@code GemmaForCausalLM}): norm weights stored as {@code 1 + w}. */
    GEMMA(new Gemma()),
    /** Gemma 2 ({@code Gemma2ForCausalLM}): soft-capping, alternating sliding window, norms as {@code 1 + w}. */
    GEMMA2(new Gemma2()),
    /** OLMo 2 ({@code Olmo2ForCausalLM}): post-norms only, q/k norms over the whole projection. */
    OLMO2(new Olmo2()),
    /** Granite MoE ({@code GraniteMoeForCausalLM}): multipliers, experts with fused gate/up ({@code input_linear}). */
    GRANITEMOE(new GraniteMoe()),
    /** gpt-oss ({@code GptOssForCausalLM}): attention sinks, fused transposed experts; GGUF → HF only. */
    GPT_OSS(new GptOss()),
    /** DeepSeek-V3 / R1 ({@code DeepseekV3ForCausalLM}, GGUF {@code deepseek2}): MLA, grouped routing; GGUF → HF only. */
    DEEPSEEK2(new Deepseek2()),
    /** Gemma 4 text ({@code Gemma4ForCausalLM}): per-layer head dimensions, proportional rope, layer scalars. */
    GEMMA4(new Gemma4()),
    // the text models of vision-language GGUFs (GGUF -> HF only, as the text class transformers runs them with)
    /** Qwen2-VL / Qwen2.5-VL text (GGUF {@code qwen2vl}) as {@code Qwen2ForCausalLM}: M-RoPE is plain rope on text. */
    QWEN2VL(new Qwen2Vl()),
    /** Qwen3-VL text (GGUF {@code qwen3vl}) as {@code Qwen3ForCausalLM}: interleaved M-RoPE is plain rope on text. */
    QWEN3VL(new Qwen3Vl()),
    /** Mistral 3 text (GGUF {@code mistral3}) as {@code MistralForCausalLM}, or {@code Ministral3ForCausalLM} with yarn. */
    MISTRAL3(new Mistral3()),
    /** Llama 3.2 Vision text (GGUF {@code mllama}, Ollama's own) as {@code MllamaForCausalLM}: cross-attention layers, vision left out. */
    MLLAMA(new Mllama()),
    // Qwen 3.5 / 3.6 text: gated delta-net and gated attention layers (both directions)
    /** Qwen 3.5 dense text (GGUF {@code qwen35}) as {@code Qwen3_5ForCausalLM}. */
    QWEN35(new Qwen35()),
    /** Qwen 3.5 / 3.6 MoE text (GGUF {@code qwen35moe}) as {@code Qwen3_5MoeForCausalLM}. */
    QWEN35MOE(new Qwen35Moe()),
    // encoders (embedding models): only the GGUF -> HF direction (ArchSpec.encoder)
    /** BERT ({@code BertModel}: all-minilm, mxbai-embed-large, snowflake-arctic-embed); {@code bert} with a WordPiece vocabulary. */
    BERT(new Bert()),
    /** XLM-RoBERTa ({@code XLMRobertaModel}: bge-m3), which llama.cpp's converter writes as {@code bert} with a Unigram vocabulary. */
    XLM_ROBERTA(new XlmRoberta()),
    /** Nomic BERT ({@code NomicBertModel}: nomic-embed-text): rotary, SwiGLU, fused {@code attn_qkv}. */
    NOMIC_BERT(new NomicBert());

    private final ArchSpec spec;

    Architecture(ArchSpec spec) {
        this.spec = spec;
    }

    /** Everything this architecture means ({@link ArchSpec}). */
    public ArchSpec spec() {
        return spec;
    }

    /** {@code general.architecture}; also the prefix of the per-architecture GGUF keys. */
    public String ggufName() {
        return spec.ggufName();
    }

    /** HF {@code architectures[0]} values; the first is canonical. */
    public List<String> hfArchitectures() {
        return spec.tables().hfArchitectures();
    }

    /** HF {@code model_type} values; the first is canonical. */
    public List<String> hfModelTypes() {
        return spec.tables().hfModelTypes();
    }

    /** The canonical HF {@code architectures[0]} ({@code LlamaForCausalLM} …). */
    public String hfArchitecture() {
        return hfArchitectures().getFirst();
    }

    /** The canonical HF {@code model_type}. */
    public String hfModelType() {
        return hfModelTypes().getFirst();
    }

    /** Whether q/k projection rows are permuted between HF and GGUF (§7.2). */
    public boolean permutesQk() {
        return spec.permutesQk();
    }

    /** What llama.cpp's converter adds to every norm weight; the HF value is {@code stored - normShift()}. */
    public float normShift() {
        return spec.normShift();
    }

    /** The architecture and {@link ArchSpec.TextPart} whose multimodal HF architecture is {@code hfArchitecture}, if any. */
    public record Text(Architecture architecture, ArchSpec.TextPart part) {
    }

    /** The text model of multimodal HF architecture {@code hfArchitecture} (null allowed), when one is mapped. */
    public static Optional<Text> textPartOf(String hfArchitecture) {
        for (Architecture a : values()) {
            for (ArchSpec.TextPart t : a.spec.textParts()) {
                if (t.hfArchitecture().equals(hfArchitecture)) {
                    return Optional.of(new Text(a, t));
                }
            }
        }
        return Optional.empty();
    }

    /** The architecture of a GGUF with this {@code general.architecture} and metadata {@code m}, if supported. */
    public static Optional<Architecture> fromGguf(String generalArchitecture, GgufParams m) {
        return Arrays.stream(values()).filter(a -> a.ggufName().equals(generalArchitecture) && a.spec.claims(m)).findFirst();
    }

    /**
     * Resolves a {@code config.json}: by {@code architectures[0]} when given (null allowed), else by
     * {@code model_type} (null allowed). The result says why when the model is not supported.
     */
    public static Resolution fromHf(String hfArchitecture, String modelType) {
        if (hfArchitecture != null) {
            for (Architecture a : values()) {
                if (a.hfArchitectures().contains(hfArchitecture)) {
                    return a.spec().encoder() ? new Resolution.Unsupported(encoderRefusal(hfArchitecture)) : new Resolution.Supported(a);
                }
            }
            return new Resolution.Unsupported(refusal(hfArchitecture, modelType));
        }
        if (modelType != null) {
            for (Architecture a : values()) {
                if (a.hfModelTypes().contains(modelType)) {
                    return a.spec().encoder() ? new Resolution.Unsupported(encoderRefusal("model_type " + modelType)) : new Resolution.Supported(a);
                }
            }
            return new Resolution.Unsupported(refusal(null, modelType));
        }
        return new Resolution.Unsupported("config.json names no architecture (no architectures, no model_type)");
    }

    private static String encoderRefusal(String name) {
        return name + ": an embedding (encoder) model: modelfs maps its GGUF to a Hugging Face folder, but synthesizes no GGUF from it";
    }

    private static String refusal(String hfArchitecture, String modelType) {
        String name = hfArchitecture != null ? hfArchitecture : "model_type " + modelType;
        String lower = (hfArchitecture != null ? hfArchitecture : String.valueOf(modelType)).toLowerCase(Locale.ROOT);
        if (lower.startsWith("gemma")) {
            return name + ": of the gemma architectures GemmaForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma4ForCausalLM and the text of "
                    + "Gemma4ForConditionalGeneration are mapped; the others (Gemma 3 with vision, Gemma 3n) have tensors and hyperparameters modelfs does not map";
        }
        if (lower.contains("moe") || lower.startsWith("deepseek")) {
            return name + ": no tensor-name mapping for this mixture-of-experts architecture in modelfs";
        }
        return name + ": architecture not supported by modelfs's GGUF mapping (supported: "
                + String.join(", ", Arrays.stream(values()).filter(a -> !a.spec().encoder())
                        .flatMap(a -> a.hfArchitectures().stream()).toList()) + ")";
    }

    /** The outcome of {@link #fromHf}: a supported architecture or the reason why not. */
    public sealed interface Resolution {
        /** A supported architecture. */
        record Supported(Architecture architecture) implements Resolution {
        }

        /** Not supported; {@code reason} is one line for logs and {@code modelfs show}. */
        record Unsupported(String reason) implements Resolution {
        }
    }
}
