package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The mixture-of-experts block of Gemma 4 (26B-A4B; transformers' {@code enable_moe_block}), both directions, for
 * {@link Gemma4} and {@link Gemma4Synth} (docs/FORMATS.md §7.3, §7.5). In every layer of such a model the dense MLP stays
 * (llama.cpp's "shared expert") and a routed block is added beside it, as llama.cpp's converter ({@code Gemma4Model}) writes it:
 * <ul>
 *   <li>the router {@code router.proj.weight} ↔ {@code blk.N.ffn_gate_inp.weight} {@code [E, hidden]}, its input scale
 *       {@code router.scale} ↔ {@code blk.N.ffn_gate_inp.scale} {@code [hidden]} and its per-expert output scale
 *       {@code router.per_expert_scale} ↔ {@code blk.N.ffn_down_exps.scale} {@code [E]} (the converter's
 *       {@code modify_tensors}: the same values; llama.cpp multiplies each expert's output by it, transformers its top-k weight);</li>
 *   <li>the experts, stacked and fused as transformers keeps them: {@code experts.gate_up_proj} {@code [E, 2·ff, hidden]}
 *       (each expert's gate rows, then its up rows) ↔ {@code blk.N.ffn_gate_up_exps.weight}, and {@code experts.down_proj}
 *       {@code [E, hidden, ff]} ↔ {@code blk.N.ffn_down_exps.weight}, values and row order as they are (HF names without
 *       {@code .weight}, as transformers and Ollama's {@code x/create} spell them); a GGUF whose layer holds the gate and up
 *       experts apart instead ({@code blk.N.ffn_gate_exps.weight} and {@code blk.N.ffn_up_exps.weight}, each {@code [E, ff, hidden]}:
 *       older Ollama files, written from a checkpoint's {@code moe.gate_proj} / {@code moe.up_proj}, which upstream llama.cpp loads
 *       as they are; llama.cpp's NVFP4 conversions hold them apart too, with per-expert {@code .scale} / {@code .input_scale}
 *       tensors no rule names, so their folder stays refused) gives {@code experts.gate_up_proj} fused, every expert's gate
 *       rows then its up rows (a row split, GGUF → Hugging Face only: the other direction writes the fused tensor, as llama.cpp's
 *       converter does);</li>
 *   <li>three norms: {@code pre_feedforward_layernorm_2} ↔ {@code pre_ffw_norm_2}, {@code post_feedforward_layernorm_1} ↔
 *       {@code post_ffw_norm_1}, {@code post_feedforward_layernorm_2} ↔ {@code post_ffw_norm_2}.</li>
 * </ul>
 * KVs: {@code expert_count} ↔ {@code num_experts}, {@code expert_used_count} ↔ {@code top_k_experts},
 * {@code expert_feed_forward_length} ↔ {@code moe_intermediate_size}. The routing itself (softmax over the experts, top-k,
 * renormalized, times the per-expert scale) is the same code in both runtimes and has no KV.
 *
 * <p>Invariants: every tensor here exists in a layer exactly when the model has experts ({@link #moe(JsonNode)} on the Hugging
 * Face side, {@code expert_count > 0} on the GGUF side), and then in every layer (transformers has no per-layer switch).
 * A GGUF without {@code ffn_down_exps.scale} (written from a checkpoint without a per-expert scale: Ollama's runtime and
 * llama.cpp's loader take it as optional and then scale by 1) gets {@code router.per_expert_scale} as ones in the folder
 * ({@link #hfConstants}, {@code [E]}, written like {@code router.scale}): the same routing, and a load with no missing key.
 * Refused with a one-line reason: {@code num_experts} without {@code enable_moe_block} (or the reverse), a top-k outside
 * {@code [1, E]}, a non-positive expert size, a GGUF layer with both the fused and the separate gate/up experts, or with only
 * one of the separate ones, or with another routed-block tensor missing, or with {@code ffn_down_exps.scale} in some layers
 * only. Stateless.
 */
final class Gemma4Experts {
    private Gemma4Experts() {
    }

    /** The per-layer rules of the routed block (named by GGUF; required only in a model with experts). */
    static final List<LayerRule> LAYERS = List.of(
            new LayerRule("router.proj", "ffn_gate_inp", d -> new long[] {d.experts(), d.hidden()}),   // shapes: layerShape
            LayerRule.norm("pre_feedforward_layernorm_2", "pre_ffw_norm_2"),
            LayerRule.norm("post_feedforward_layernorm_1", "post_ffw_norm_1"),
            LayerRule.norm("post_feedforward_layernorm_2", "post_ffw_norm_2"));

    private static final String GATE_UP = "ffn_gate_up_exps.weight", DOWN = "ffn_down_exps.weight";
    /** The separate gate and up experts some GGUFs hold instead of {@link #GATE_UP} (read only). */
    private static final String GATE = "ffn_gate_exps.weight", UP = "ffn_up_exps.weight";
    private static final String ROUTER_SCALE = "ffn_gate_inp.scale", EXPERT_SCALE = "ffn_down_exps.scale";

    /** The tensors whose HF names have no {@code .weight}: one GGUF tensor each, values as they are. */
    static final List<Assembly> ASSEMBLIES = List.of(
            Assembly.renamed("router.scale", ROUTER_SCALE, Assembly.Layout.VECTOR),
            Assembly.renamed("router.per_expert_scale", EXPERT_SCALE, Assembly.Layout.VECTOR),
            Assembly.renamed("experts.gate_up_proj", GATE_UP, Assembly.Layout.STACKED),
            new Assembly("experts.gate_up_proj", List.of(new Assembly.Part(List.of(GATE), false), new Assembly.Part(List.of(UP), false)),
                    Assembly.Layout.STACKED),
            Assembly.renamed("experts.down_proj", DOWN, Assembly.Layout.STACKED));

    /** Per-layer GGUF names (with suffix) of the routed block, in llama.cpp's loading order. */
    static final List<String> GGUF = List.of("ffn_gate_inp.weight", ROUTER_SCALE, "pre_ffw_norm_2.weight", "post_ffw_norm_1.weight",
            "post_ffw_norm_2.weight", GATE_UP, DOWN, EXPERT_SCALE);

    /** Every per-layer GGUF name the GGUF → Hugging Face direction reads: {@link #GGUF} and the separate gate/up experts. */
    private static final List<String> READ = Layers.of(GGUF, List.of(GATE, UP));

    // ---- Hugging Face → GGUF

    /** Whether the Hugging Face text config {@code c} has the routed block; refuses inconsistent expert fields. */
    static boolean moe(JsonNode c) {
        boolean on = c.path("enable_moe_block").asBoolean(false);
        long experts = c.path("num_experts").asLong(0);
        if (!on) {
            if (experts > 0) {
                throw refused("num_experts = " + experts + " without enable_moe_block");
            }
            return false;
        }
        long k = c.path("top_k_experts").asLong(0);
        if (experts <= 0 || k < 1 || k > experts) {
            throw refused("enable_moe_block with num_experts " + c.path("num_experts") + " and top_k_experts " + c.path("top_k_experts"));
        }
        if (c.path("moe_intermediate_size").asLong(0) <= 0) {
            throw refused("enable_moe_block without a positive moe_intermediate_size");
        }
        return true;
    }

    /** Checks the expert fields of {@code c} (through {@link #moe}). */
    static void checkHfConfig(JsonNode c) {
        moe(c);
    }

    /** The KVs of the routed block, as llama.cpp's converter writes them (none for a model without experts). */
    static List<GgufKv> extraKvs(JsonNode c, String p) {
        if (!moe(c)) {
            return List.of();
        }
        return List.of(u32(p + "expert_count", c.path("num_experts").asInt()), u32(p + "expert_used_count", c.path("top_k_experts").asInt()),
                u32(p + "expert_feed_forward_length", c.path("moe_intermediate_size").asInt()));
    }

    /** Whether per-layer GGUF name {@code gguf} (without layer prefix; suffix {@code .weight} dropped) is the routed block's. */
    static boolean owns(String gguf) {
        return GGUF.contains(gguf) || GGUF.contains(gguf + ".weight");
    }

    /** The HF shape of routed-block tensor {@code gguf} ({@link #owns}), empty when {@code c} has no experts. */
    static Optional<long[]> layerShape(String gguf, JsonNode c, ConfigKeys.Dims d) {
        if (!moe(c)) {
            return Optional.empty();
        }
        long e = c.path("num_experts").asLong(), ff = c.path("moe_intermediate_size").asLong(), h = d.hidden();
        String g = gguf.endsWith(".scale") ? gguf : gguf + ".weight";
        return Optional.of(switch (g) {
            case "ffn_gate_inp.weight" -> new long[] {e, h};
            case ROUTER_SCALE, "pre_ffw_norm_2.weight", "post_ffw_norm_1.weight", "post_ffw_norm_2.weight" -> new long[] {h};
            case EXPERT_SCALE -> new long[] {e};
            case GATE_UP -> new long[] {e, 2 * ff, h};
            case DOWN -> new long[] {e, h, ff};
            default -> throw new IllegalArgumentException("not a Gemma 4 expert tensor: " + gguf);
        });
    }

    /** The per-layer tensors llama.cpp requires: {@code base} (the dense layer's) without the routed block's, plus it when {@code c} has experts. */
    static List<String> requiredInLayer(List<String> base, JsonNode c) {
        List<String> out = new ArrayList<>(base.stream().filter(n -> !GGUF.contains(n)).toList());
        if (moe(c)) {
            out.addAll(GGUF);
        }
        return out;
    }

    // ---- GGUF → Hugging Face

    /** Refuses a GGUF whose experts this mapping does not rebuild (see the class comment). */
    static void checkGguf(GgufParams m, String p) {
        long experts = m.integer(p + "expert_count", 0L);
        long layers = m.integer(p + "block_count", 0L);
        if (experts == 0) {
            for (long l = 0; l < layers; l++) {
                for (String n : READ) {
                    if (m.hasTensor("blk." + l + "." + n)) {
                        throw new IllegalArgumentException("gemma4 without " + p + "expert_count has expert tensor blk." + l + "." + n);
                    }
                }
            }
            return;
        }
        long used = m.integer(p + "expert_used_count", 0L);
        if (experts < 0 || used < 1 || used > experts) {
            throw new IllegalArgumentException("gemma4 " + p + "expert_count " + experts + " with expert_used_count " + used);
        }
        if (m.integer(p + "expert_feed_forward_length", 0L) <= 0) {
            throw new IllegalArgumentException("gemma4 with experts but no positive " + p + "expert_feed_forward_length");
        }
        Boolean scaled = null;
        for (long l = 0; l < layers; l++) {
            String blk = "blk." + l + ".";
            boolean fused = m.hasTensor(blk + GATE_UP), gate = m.hasTensor(blk + GATE), up = m.hasTensor(blk + UP);
            if (fused ? gate || up : gate != up) {
                throw new IllegalArgumentException("gemma4 layer " + l + " has " + (fused ? GATE_UP + " beside " : "only one of ")
                        + GATE + " and " + UP + " (transformers' experts.gate_up_proj is the fused one or both halves)");
            }
            for (String n : GGUF) {
                if (!n.equals(EXPERT_SCALE) && !(n.equals(GATE_UP) && gate) && !m.hasTensor(blk + n)) {
                    throw new IllegalArgumentException("gemma4 layer " + l + " has no " + n + " (transformers' Gemma 4 has experts in every "
                            + "layer or in none)");
                }
            }
            boolean s = m.hasTensor(blk + EXPERT_SCALE);
            if (scaled != null && scaled != s) {
                throw new IllegalArgumentException("gemma4 layers with and without " + EXPERT_SCALE + " (transformers' router.per_expert_scale "
                        + "is in every layer or, as ones, in none)");
            }
            scaled = s;
        }
    }

    /**
     * {@code router.per_expert_scale} of ones ({@code [expert_count]}, written like the layer's {@code ffn_gate_inp.scale}) for
     * every layer of a GGUF with experts but no {@code ffn_down_exps.scale} ({@link #checkGguf}: then in no layer); none otherwise.
     */
    static List<HfConstant> hfConstants(GgufParams m, String p, String layerPrefix) {
        long experts = m.integer(p + "expert_count", 0L), layers = m.integer(p + "block_count", 0L);
        List<HfConstant> out = new ArrayList<>();
        for (long l = 0; experts > 0 && l < layers; l++) {
            if (!m.hasTensor("blk." + l + "." + EXPERT_SCALE)) {
                out.add(new HfConstant(layerPrefix + l + ".router.per_expert_scale", "blk." + l + "." + ROUTER_SCALE, new long[] {experts}, 1f));
            }
        }
        return out;
    }

    /** The expert fields of a rebuilt {@code config.json} ({@code enable_moe_block} false and no expert fields for a dense model). */
    static void completeHfConfig(ObjectNode c, GgufParams m, String p) {
        long experts = m.integer(p + "expert_count", 0L);
        c.put("enable_moe_block", experts > 0);
        if (experts > 0) {
            c.put("num_experts", experts);
            c.put("top_k_experts", m.integer(p + "expert_used_count", 0L));
            c.put("moe_intermediate_size", m.integer(p + "expert_feed_forward_length", 0L));
        }
    }

    private static IllegalArgumentException refused(String what) {
        return new IllegalArgumentException("gemma4 " + what + " is not mapped to GGUF");
    }

    private static GgufKv u32(String key, int v) {
        return new GgufKv(key, GgufValueType.UINT32, v, 0, 0);
    }
}
