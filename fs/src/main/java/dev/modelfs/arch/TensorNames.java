package dev.modelfs.arch;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * HF tensor names ↔ GGUF tensor names per {@link Architecture} (docs/FORMATS.md §7.3; llama.cpp's
 * {@code gguf-py/gguf/tensor_mapping.py}), from each architecture's {@link ArchSpec#layers()} and
 * {@link ArchSpec#experts()}.
 *
 * <p>Invariants: the mapping is a bijection on the names it accepts: for every architecture
 * {@code a} and HF name {@code h}, {@code toGguf(a, h) = Optional.of(g)} implies
 * {@code toHf(a, g) = Optional.of(h')} where {@code h'} is {@code h} in canonical form (the only
 * non-canonical HF spellings are Ollama's {@code mlp.switch_mlp.<proj>} for stacked experts, canonical
 * {@code mlp.experts.<proj>}), and {@code toGguf(a, h') = Optional.of(g)}. Only the suffixes
 * {@code .weight} and {@code .bias} are accepted, and kept. Stacked experts ({@code [n_expert, out, in]},
 * the way Ollama stores them) map to one GGUF {@code blk.N.ffn_*_exps} tensor; per-expert HF names
 * ({@code <prefix>.E.<proj>}, how {@code save_pretrained} writes them) are answered by
 * {@link #perExpert} instead. Every GGUF name produced is shorter than 64 bytes for layer numbers
 * below 10^9. The exception: the parts of a row-split {@link Assembly} (GraniteMoe's {@code input_linear}) all
 * map back to it and it maps to its first part; the GGUF → HF direction builds it from its assembly
 * ({@code ArchSpec.assemblies}), the other asks {@link #splitParts} first. Names this class does not know map to empty: the caller decides (a GGUF view must then
 * leave the model out, as llama.cpp fails on unused tensors).
 */
public final class TensorNames {

    private TensorNames() {
    }

    private static final String NUM = "(0|[1-9][0-9]{0,8})";
    /** An HF per-layer name after the architecture's {@link ArchSpec#hfLayerPrefix()}. */
    private static final Pattern HF_LAYER = Pattern.compile(NUM + "\\.(.+)\\.(weight|bias)");
    private static final Pattern GGUF_LAYER = Pattern.compile("blk\\." + NUM + "\\.(.+)\\.(weight|bias)");
    private static final Pattern GGUF_EXPERTS = Pattern.compile("blk\\." + NUM + "\\.ffn_(gate|up|down)_exps\\.weight");
    private static final Pattern SUFFIX = Pattern.compile("(.+)\\.(weight|bias)");
    /** The middle of a per-expert HF name: {@code <prefix>.<expert>.<proj>}. */
    private static final Pattern EXPERT_MID = Pattern.compile("(.+)\\." + NUM + "\\.([a-z0-9_]+)");

    /** The GGUF name of HF tensor {@code hfName} in architecture {@code a}, if it has one. */
    public static Optional<String> toGguf(Architecture a, String hfName) {
        Matcher m = hfLayer(a, hfName);
        if (m != null) {
            String mid = m.group(2).replace("mlp.switch_mlp.", "mlp.experts.");
            for (LayerRule r : a.spec().layers()) {
                if (r.hf().equals(mid)) {
                    return Optional.of("blk." + m.group(1) + "." + r.gguf() + "." + m.group(3));
                }
            }
            return Optional.empty();
        }
        Matcher s = SUFFIX.matcher(hfName);
        if (s.matches()) {
            for (String[] g : a.spec().globals()) {
                if (g[0].equals(s.group(1))) {
                    return Optional.of(g[1] + "." + s.group(2));
                }
            }
        }
        return Optional.empty();
    }

    /** The layer, middle and suffix of per-layer HF name {@code hfName} of {@code a}, or null. */
    private static Matcher hfLayer(Architecture a, String hfName) {
        String prefix = a.spec().hfLayerPrefix();
        if (!hfName.startsWith(prefix)) {
            return null;
        }
        Matcher m = HF_LAYER.matcher(hfName.substring(prefix.length()));
        return m.matches() ? m : null;
    }

    /**
     * The HF names of the q, k and v thirds of a fused GGUF {@code blk.N.attn_qkv.(weight|bias)} when {@code a} splits it
     * ({@link ArchSpec#splitQkv()}), in row order; empty otherwise.
     */
    public static List<String> splitQkv(Architecture a, String ggufName) {
        Matcher m = GGUF_LAYER.matcher(ggufName);
        if (a.spec().splitQkv().isEmpty() || !m.matches() || !m.group(2).equals("attn_qkv")) {
            return List.of();
        }
        return a.spec().splitQkv().stream().map(h -> a.spec().hfLayerPrefix() + m.group(1) + "." + h + "." + m.group(3)).toList();
    }

    /** The canonical HF name of GGUF tensor {@code ggufName} in architecture {@code a}, if any. */
    public static Optional<String> toHf(Architecture a, String ggufName) {
        Matcher m = GGUF_LAYER.matcher(ggufName);
        if (m.matches()) {
            return rule(a, m.group(2)).map(r -> a.spec().hfLayerPrefix() + m.group(1) + "." + r.hf() + "." + m.group(3));
        }
        Matcher s = SUFFIX.matcher(ggufName);
        if (s.matches()) {
            for (String[] g : a.spec().globals()) {
                if (g[1].equals(s.group(1))) {
                    return Optional.of(g[0] + "." + s.group(2));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The GGUF names of the parts of HF tensor {@code hfName}, when it is a {@link Assembly#isRowSplit row-split}
     * assembly of {@code a} (with layer number, in the assembly's order) and no {@link Assembly#isRename rename} of {@code a}
     * gives it too (Gemma 4's experts: the fused GGUF tensor is the one written, the halves only read).
     */
    public static Optional<List<String>> splitParts(Architecture a, String hfName) {
        if (!hfName.startsWith(a.spec().hfLayerPrefix())) {
            return Optional.empty();
        }
        Matcher m = HF_LAYER.matcher(hfName.substring(a.spec().hfLayerPrefix().length()));
        if (!m.matches()) {
            return Optional.empty();
        }
        String rest = m.group(2) + "." + m.group(3);
        if (a.spec().assemblies().stream().anyMatch(x -> x.isRename() && x.hf().equals(rest))) {
            return Optional.empty();
        }
        return a.spec().assemblies().stream().filter(x -> x.isRowSplit() && x.hf().equals(rest)).findFirst()
                .map(x -> x.gguf().stream().map(g -> "blk." + m.group(1) + "." + g).toList());
    }

    /**
     * The GGUF name of per-layer HF tensor {@code hfName} when it is a {@link Assembly#isRename renamed} assembly of
     * {@code a} (Gemma 4's buffer {@code model.layers.N.layer_scalar} → {@code blk.N.layer_output_scale.weight}): the
     * Hugging Face → GGUF direction of what the GGUF → HF direction builds from {@link ArchSpec#assemblies}.
     */
    public static Optional<String> renamedToGguf(Architecture a, String hfName) {
        String prefix = a.spec().hfLayerPrefix();
        if (!hfName.startsWith(prefix)) {
            return Optional.empty();
        }
        Matcher m = Pattern.compile(NUM + "\\.(.+)").matcher(hfName.substring(prefix.length()));
        if (!m.matches()) {
            return Optional.empty();
        }
        return a.spec().assemblies().stream().filter(x -> x.isRename() && x.hf().equals(m.group(2))).findFirst()
                .map(x -> "blk." + m.group(1) + "." + x.gguf().getFirst());
    }

    /** The rule of per-layer GGUF tensor {@code gguf} (without {@code blk.N.} and suffix) in {@code a}. */
    public static Optional<LayerRule> rule(Architecture a, String gguf) {
        return a.spec().layers().stream().filter(r -> r.gguf().equals(gguf)).findFirst();
    }

    /**
     * One expert's slice of a stacked GGUF tensor: HF {@code hfName} (per expert) is slice {@code expert}
     * (outermost axis) of GGUF {@code stackedGguf}.
     */
    public record ExpertSlice(String stackedGguf, int layer, int expert, String hfName) {
    }

    /** The stacked tensor that per-expert HF tensor {@code hfName} belongs to, for MoE architectures. */
    public static Optional<ExpertSlice> perExpert(Architecture a, String hfName) {
        Optional<Experts> experts = a.spec().experts();
        Matcher m = hfLayer(a, hfName);
        if (experts.isEmpty() || m == null || !m.group(3).equals("weight")) {
            return Optional.empty();
        }
        Experts e = experts.get();
        Matcher x = EXPERT_MID.matcher(m.group(2));
        if (!x.matches() || !x.group(1).equals(e.hfPrefix())) {
            return Optional.empty();
        }
        return e.ggufProj(x.group(3)).map(g -> new ExpertSlice("blk." + m.group(1) + ".ffn_" + g + "_exps.weight",
                Integer.parseInt(m.group(1)), Integer.parseInt(x.group(2)), hfName));
    }

    /**
     * For a stacked GGUF expert tensor ({@code blk.N.ffn_{gate,up,down}_exps.weight}) of MoE architecture
     * {@code a}, the slice of expert {@code expert}; empty for any other name or architecture.
     */
    public static Optional<ExpertSlice> expertSlice(Architecture a, String ggufName, int expert) {
        Optional<Experts> experts = a.spec().experts();
        Matcher m = GGUF_EXPERTS.matcher(ggufName);
        if (experts.isEmpty() || !m.matches() || expert < 0) {
            return Optional.empty();
        }
        Experts e = experts.get();
        if (e.hfPrefix() == null) {
            return Optional.empty();
        }
        String hf = a.spec().hfLayerPrefix() + m.group(1) + "." + e.hfPrefix() + "." + expert + "." + e.hfProj(m.group(2)) + ".weight";
        return Optional.of(new ExpertSlice(ggufName, Integer.parseInt(m.group(1)), expert, hf));
    }

    /**
     * Whether llama.cpp's converter keeps this GGUF tensor F32 whatever the file type:
     * {@code *_norm.weight}, the MoE router {@code ffn_gate_inp(_shexp).weight}, a gated delta-net's
     * {@code ssm_conv1d.weight} and {@code rope_freqs.weight} (1-D tensors are F32 as well; the caller checks the rank).
     */
    public static boolean staysF32(String ggufName) {
        return ggufName.endsWith("_norm.weight") || ggufName.equals("rope_freqs.weight") || ggufName.endsWith(".ssm_conv1d.weight")
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
        return a.spec().qkPermutation(m.group(2));
    }
}
