package dev.modelfs.arch;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HF tensor names ↔ GGUF tensor names per {@link Architecture} (docs/FORMATS.md §7.3; llama.cpp's
 * {@code gguf-py/gguf/tensor_mapping.py}).
 *
 * <p>Invariants: the mapping is a bijection on the names it accepts: for every architecture
 * {@code a} and HF name {@code h}, {@code toGguf(a, h) = Optional.of(g)} implies
 * {@code toHf(a, g) = Optional.of(h')} where {@code h'} is {@code h} in canonical form (the only
 * non-canonical HF spellings are Ollama's {@code mlp.switch_mlp.<proj>} for stacked experts, canonical
 * {@code mlp.experts.<proj>}), and {@code toGguf(a, h') = Optional.of(g)}. Only the suffixes
 * {@code .weight} and {@code .bias} are accepted, and kept. Stacked experts ({@code [n_expert, out, in]},
 * the way Ollama stores them) map to one GGUF {@code blk.N.ffn_*_exps} tensor; per-expert HF names
 * ({@code mlp.experts.E.<proj>}, how {@code save_pretrained} writes them) are answered by
 * {@link #perExpert} instead. Every GGUF name produced is shorter than 64 bytes for layer numbers
 * below 10^9. Names this class does not know map to empty: the caller decides (a GGUF view must then
 * leave the model out, as llama.cpp fails on unused tensors).
 */
public final class TensorNames {

    private TensorNames() {
    }

    /** One per-layer name pair: HF {@code model.layers.N.<hf>} ↔ GGUF {@code blk.N.<gguf>}. */
    private record LayerRule(String hf, String gguf, Set<Architecture> only) {
        boolean appliesTo(Architecture a) {
            return only.isEmpty() || only.contains(a);
        }
    }

    private static final Set<Architecture> ALL = Set.of();
    private static final Set<Architecture> QK_NORM = Set.of(Architecture.QWEN3, Architecture.QWEN3MOE, Architecture.GEMMA3);
    private static final Set<Architecture> GEMMA = Set.of(Architecture.GEMMA3);
    private static final Set<Architecture> NOT_GEMMA = java.util.EnumSet.complementOf(java.util.EnumSet.of(Architecture.GEMMA3));
    private static final Set<Architecture> MOE = Set.of(Architecture.QWEN3MOE);
    private static final Set<Architecture> FUSED = Set.of(Architecture.PHI3);
    private static final Set<Architecture> UNFUSED = java.util.EnumSet.complementOf(java.util.EnumSet.of(Architecture.PHI3));

    private static final List<LayerRule> LAYER = List.of(
            new LayerRule("input_layernorm", "attn_norm", ALL),
            new LayerRule("self_attn.q_proj", "attn_q", UNFUSED),
            new LayerRule("self_attn.k_proj", "attn_k", UNFUSED),
            new LayerRule("self_attn.v_proj", "attn_v", UNFUSED),
            new LayerRule("self_attn.qkv_proj", "attn_qkv", FUSED),
            new LayerRule("self_attn.o_proj", "attn_output", ALL),
            new LayerRule("self_attn.q_norm", "attn_q_norm", QK_NORM),
            new LayerRule("self_attn.k_norm", "attn_k_norm", QK_NORM),
            new LayerRule("post_attention_layernorm", "ffn_norm", NOT_GEMMA),
            new LayerRule("post_attention_layernorm", "post_attention_norm", GEMMA),
            new LayerRule("pre_feedforward_layernorm", "ffn_norm", GEMMA),
            new LayerRule("post_feedforward_layernorm", "post_ffw_norm", GEMMA),
            new LayerRule("mlp.gate_proj", "ffn_gate", UNFUSED),
            new LayerRule("mlp.up_proj", "ffn_up", UNFUSED),
            new LayerRule("mlp.gate_up_proj", "ffn_up", FUSED),
            new LayerRule("mlp.down_proj", "ffn_down", ALL),
            new LayerRule("mlp.gate", "ffn_gate_inp", MOE),
            new LayerRule("mlp.experts.gate_proj", "ffn_gate_exps", MOE),
            new LayerRule("mlp.experts.up_proj", "ffn_up_exps", MOE),
            new LayerRule("mlp.experts.down_proj", "ffn_down_exps", MOE));

    /** Global name pairs (no layer). */
    private static final List<String[]> GLOBAL = List.of(
            new String[]{"model.embed_tokens", "token_embd"},
            new String[]{"model.norm", "output_norm"},
            new String[]{"lm_head", "output"});

    private static final Pattern HF_LAYER = Pattern.compile("model\\.layers\\.(0|[1-9][0-9]{0,8})\\.(.+)\\.(weight|bias)");
    private static final Pattern GGUF_LAYER = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\.(.+)\\.(weight|bias)");
    private static final Pattern HF_EXPERT = Pattern.compile(
            "model\\.layers\\.(0|[1-9][0-9]{0,8})\\.mlp\\.experts\\.(0|[1-9][0-9]{0,8})\\.(gate_proj|up_proj|down_proj)\\.weight");
    private static final Pattern SUFFIX = Pattern.compile("(.+)\\.(weight|bias)");

    /** The GGUF name of HF tensor {@code hfName} in architecture {@code a}, if it has one. */
    public static Optional<String> toGguf(Architecture a, String hfName) {
        Matcher m = HF_LAYER.matcher(hfName);
        if (m.matches()) {
            String mid = m.group(2).replace("mlp.switch_mlp.", "mlp.experts.");
            for (LayerRule r : LAYER) {
                if (r.hf.equals(mid) && r.appliesTo(a)) {
                    return Optional.of("blk." + m.group(1) + "." + r.gguf + "." + m.group(3));
                }
            }
            return Optional.empty();
        }
        Matcher s = SUFFIX.matcher(hfName);
        if (s.matches()) {
            for (String[] g : GLOBAL) {
                if (g[0].equals(s.group(1))) {
                    return Optional.of(g[1] + "." + s.group(2));
                }
            }
        }
        return Optional.empty();
    }

    /** The canonical HF name of GGUF tensor {@code ggufName} in architecture {@code a}, if any. */
    public static Optional<String> toHf(Architecture a, String ggufName) {
        Matcher m = GGUF_LAYER.matcher(ggufName);
        if (m.matches()) {
            for (LayerRule r : LAYER) {
                if (r.gguf.equals(m.group(2)) && r.appliesTo(a)) {
                    return Optional.of("model.layers." + m.group(1) + "." + r.hf + "." + m.group(3));
                }
            }
            return Optional.empty();
        }
        Matcher s = SUFFIX.matcher(ggufName);
        if (s.matches()) {
            for (String[] g : GLOBAL) {
                if (g[1].equals(s.group(1))) {
                    return Optional.of(g[0] + "." + s.group(2));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * One expert's slice of a stacked GGUF tensor: HF {@code model.layers.N.mlp.experts.E.<proj>.weight}
     * is slice {@code expert} (outermost axis) of GGUF {@code stackedGguf}.
     */
    public record ExpertSlice(String stackedGguf, int layer, int expert, String proj) {
        /** The per-expert HF name. */
        public String hfName() {
            return hfExpertName(layer, expert, proj);
        }
    }

    /** The stacked tensor that per-expert HF tensor {@code hfName} belongs to, for MoE architectures. */
    public static Optional<ExpertSlice> perExpert(Architecture a, String hfName) {
        Matcher m = HF_EXPERT.matcher(hfName);
        if (!a.isMoe() || !m.matches()) {
            return Optional.empty();
        }
        String stacked = "blk." + m.group(1) + ".ffn_" + m.group(3).replace("_proj", "") + "_exps.weight";
        return Optional.of(new ExpertSlice(stacked, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), m.group(3)));
    }

    /** The HF per-expert name {@code model.layers.<layer>.mlp.experts.<expert>.<proj>.weight}. */
    public static String hfExpertName(int layer, int expert, String proj) {
        return "model.layers." + layer + ".mlp.experts." + expert + "." + proj + ".weight";
    }

    /**
     * For a stacked GGUF expert tensor ({@code blk.N.ffn_{gate,up,down}_exps.weight}), the slice of expert
     * {@code expert}; empty for any other name.
     */
    public static Optional<ExpertSlice> expertSlice(String ggufName, int expert) {
        Matcher m = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\.ffn_(gate|up|down)_exps\\.weight").matcher(ggufName);
        if (!m.matches() || expert < 0) {
            return Optional.empty();
        }
        return Optional.of(new ExpertSlice(ggufName, Integer.parseInt(m.group(1)), expert, m.group(2) + "_proj"));
    }

    /**
     * Whether llama.cpp's converter keeps this GGUF tensor F32 whatever the file type:
     * {@code *_norm.weight}, the MoE router {@code ffn_gate_inp(_shexp).weight} and
     * {@code rope_freqs.weight} (1-D tensors are F32 as well; the caller checks the rank).
     */
    public static boolean staysF32(String ggufName) {
        return ggufName.endsWith("_norm.weight") || ggufName.equals("rope_freqs.weight")
                || ggufName.endsWith(".ffn_gate_inp.weight") || ggufName.endsWith(".ffn_gate_inp_shexp.weight");
    }

    /**
     * What llama.cpp's converter added to every value of GGUF tensor {@code ggufName} of {@code a}
     * ({@link Architecture#normShift} for norm weights, else 0): the HF value is {@code stored - shift}.
     */
    public static float storedShift(Architecture a, String ggufName) {
        return ggufName.endsWith("norm.weight") ? a.normShift() : 0f;
    }

    /** Whether GGUF tensor {@code ggufName} has its rows permuted for {@code a} (§7.2), and with which heads. */
    public static Optional<QkPermutation.Which> permutation(Architecture a, String ggufName) {
        if (!a.permutesQk()) {
            return Optional.empty();
        }
        Matcher m = GGUF_LAYER.matcher(ggufName);
        if (!m.matches()) {
            return Optional.empty();
        }
        return switch (m.group(2)) {
            case "attn_q" -> Optional.of(QkPermutation.Which.Q);
            case "attn_k" -> Optional.of(QkPermutation.Which.K);
            default -> Optional.empty();
        };
    }
}
