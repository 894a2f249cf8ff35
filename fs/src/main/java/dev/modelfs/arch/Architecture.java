package dev.modelfs.arch;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The LLM architectures modelfs maps between Hugging Face ({@code config.json} {@code architectures}
 * / {@code model_type}) and GGUF ({@code general.architecture}), docs/FORMATS.md §7.3.
 *
 * <p>Invariants: {@link #ggufName()} is unique and is llama.cpp's {@code LLM_ARCH} name (also the
 * prefix of the architecture's metadata keys); {@link #hfArchitectures()} and {@link #hfModelTypes()}
 * are non-empty and disjoint between constants; their first element is the canonical name written
 * in the GGUF → HF direction ({@code fromHf(hfArchitectures().getFirst(), ...)} gives back the
 * constant). {@link #permutesQk()} is true exactly for architectures whose llama.cpp RoPE is the
 * interleaved ("normal") kind, so that q/k rows are permuted (§7.2, {@link QkPermutation}).
 */
public enum Architecture {
    /** Llama 1/2/3.x and Mistral-style llama ({@code MistralForCausalLM}, same tensors). */
    LLAMA("llama", List.of("LlamaForCausalLM", "MistralForCausalLM"), List.of("llama", "mistral"), true, false, false),
    /** Qwen2 / Qwen2.5 (q/k/v biases, NeoX RoPE). */
    QWEN2("qwen2", List.of("Qwen2ForCausalLM"), List.of("qwen2"), false, false, false),
    /** Qwen3 dense (q_norm/k_norm, no biases, NeoX RoPE). */
    QWEN3("qwen3", List.of("Qwen3ForCausalLM"), List.of("qwen3"), false, true, false),
    /** Qwen3 MoE (stacked experts, router {@code ffn_gate_inp}). */
    QWEN3MOE("qwen3moe", List.of("Qwen3MoeForCausalLM"), List.of("qwen3_moe"), false, true, true),
    /**
     * Phi-3 / Phi-4 mini: fused {@code qkv_proj} ({@code attn_qkv}) and {@code gate_up_proj} ({@code ffn_up},
     * gate rows first) kept fused on both sides, NeoX RoPE. GGUF → HF only (the synthesized GGUF view of
     * safetensors models refuses it, {@link #servesSynthesizedGguf}).
     */
    PHI3("phi3", List.of("Phi3ForCausalLM"), List.of("phi3"), false, false, false),
    /**
     * Gemma 3 text ({@code Gemma3ForCausalLM}): q/k norms, four norms a layer, NeoX RoPE; llama.cpp stores
     * every norm weight as {@code 1 + w} ({@link #normShift}); both directions.
     */
    GEMMA3("gemma3", List.of("Gemma3ForCausalLM"), List.of("gemma3_text"), false, true, false);

    private final String ggufName;
    private final List<String> hfArchitectures;
    private final List<String> hfModelTypes;
    private final boolean permutesQk;
    private final boolean qkNorm;
    private final boolean moe;

    Architecture(String ggufName, List<String> hfArchitectures, List<String> hfModelTypes, boolean permutesQk,
                 boolean qkNorm, boolean moe) {
        this.ggufName = ggufName;
        this.hfArchitectures = hfArchitectures;
        this.hfModelTypes = hfModelTypes;
        this.permutesQk = permutesQk;
        this.qkNorm = qkNorm;
        this.moe = moe;
    }

    /** {@code general.architecture}; also the prefix of the per-architecture GGUF keys. */
    public String ggufName() {
        return ggufName;
    }

    /** HF {@code architectures[0]} values; the first is canonical. */
    public List<String> hfArchitectures() {
        return hfArchitectures;
    }

    /** HF {@code model_type} values; the first is canonical. */
    public List<String> hfModelTypes() {
        return hfModelTypes;
    }

    /** The canonical HF {@code architectures[0]} ({@code LlamaForCausalLM} …). */
    public String hfArchitecture() {
        return hfArchitectures.getFirst();
    }

    /** The canonical HF {@code model_type}. */
    public String hfModelType() {
        return hfModelTypes.getFirst();
    }

    /** Whether q/k projection rows are permuted between HF and GGUF (§7.2): only {@code llama}. */
    public boolean permutesQk() {
        return permutesQk;
    }

    /** Whether the attention has per-head q/k RMS norms ({@code attn_q_norm}/{@code attn_k_norm}). */
    public boolean hasQkNorm() {
        return qkNorm;
    }

    /** Whether the feed-forward is a mixture of experts (stacked {@code ffn_*_exps}). */
    public boolean isMoe() {
        return moe;
    }

    /**
     * What llama.cpp's converter adds to every norm weight ({@code *norm.weight}) of this architecture:
     * 1 for Gemma 3 (its RMS norm multiplies by {@code 1 + w}; llama.cpp's by the stored value), else 0.
     * The HF value is {@code stored - normShift()}, computed in f32.
     */
    public float normShift() {
        return this == GEMMA3 ? 1f : 0f;
    }

    /**
     * Why the synthesized GGUF view of a safetensors model of this architecture is refused, or empty when
     * it is served (docs/SEMANTICS.md: only the architectures tested end to end in that direction).
     */
    public Optional<String> synthesizedGgufRefusal() {
        return this == PHI3
                ? Optional.of(hfArchitecture() + ": the GGUF view of " + ggufName() + " safetensors models is not "
                        + "tested end to end, so modelfs does not serve it (the Hugging Face folder of " + ggufName()
                        + " GGUF models is)")
                : Optional.empty();
    }

    /** The architecture with this {@code general.architecture}, if supported. */
    public static Optional<Architecture> fromGguf(String generalArchitecture) {
        for (Architecture a : values()) {
            if (a.ggufName.equals(generalArchitecture)) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    /**
     * Resolves a {@code config.json}: by {@code architectures[0]} when given (null allowed), else by
     * {@code model_type} (null allowed). The result says why when the model is not supported.
     */
    public static Resolution fromHf(String hfArchitecture, String modelType) {
        if (hfArchitecture != null) {
            for (Architecture a : values()) {
                if (a.hfArchitectures.contains(hfArchitecture)) {
                    return new Resolution.Supported(a);
                }
            }
            return new Resolution.Unsupported(refusal(hfArchitecture, modelType));
        }
        if (modelType != null) {
            for (Architecture a : values()) {
                if (a.hfModelTypes.contains(modelType)) {
                    return new Resolution.Supported(a);
                }
            }
            return new Resolution.Unsupported(refusal(null, modelType));
        }
        return new Resolution.Unsupported("config.json names no architecture (no architectures, no model_type)");
    }

    private static String refusal(String hfArchitecture, String modelType) {
        String name = hfArchitecture != null ? hfArchitecture : "model_type " + modelType;
        String lower = (hfArchitecture != null ? hfArchitecture : String.valueOf(modelType)).toLowerCase(Locale.ROOT);
        if (lower.startsWith("gemma")) {
            return name + ": of the gemma architectures only Gemma3ForCausalLM (text) is mapped; the others (Gemma, "
                    + "Gemma 2, Gemma 3 with vision, Gemma 3n) have tensors and hyperparameters modelfs does not map";
        }
        if (lower.startsWith("mixtral") || lower.contains("moe") || lower.startsWith("deepseek")) {
            return name + ": no tensor-name mapping for this mixture-of-experts architecture in modelfs";
        }
        return name + ": architecture not supported by modelfs's GGUF mapping (supported: "
                + String.join(", ", supported()) + ")";
    }

    private static List<String> supported() {
        return java.util.Arrays.stream(values()).flatMap(a -> a.hfArchitectures.stream()).toList();
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
