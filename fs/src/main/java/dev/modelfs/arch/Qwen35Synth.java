package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The Hugging Face → GGUF direction of {@link Qwen35} and {@link Qwen35Moe} (the synthesized {@code model.gguf} of a
 * Qwen 3.5 / 3.6 text model as Ollama's {@code x/create} stores its {@code -mlx}, {@code -nvfp4}, {@code -mxfp8} tags),
 * as llama.cpp's converter ({@code Qwen3_5TextModel} / {@code Qwen3_5MoeTextModel} over {@code Qwen3NextModel}, run
 * with {@code --no-mtp}) writes it (docs/FORMATS.md §7.5): per layer either a gated delta-net ({@code layer_types}
 * {@code linear_attention}: {@code attn_qkv}, {@code attn_gate}, {@code ssm_*}) or gated full attention ({@code attn_q}
 * twice as wide: query and gate); {@code ssm_a = -exp(A_log)}, {@code dt_bias} as {@code ssm_dt.bias}, the conv kernel
 * squeezed to {@code [channels, kernel]} in F32, every norm stored as {@code 1 + w} except the delta-net's
 * {@code ssm_norm}; with fewer K than V heads, the V heads reordered from grouped to tiled ({@link TensorRewrite.VHeads}:
 * the V rows of {@code attn_qkv}, the rows of {@code attn_gate}, {@code ssm_alpha}, {@code ssm_beta}, the elements of
 * {@code ssm_a} and {@code ssm_dt}, the V channels of {@code ssm_conv1d}, the column blocks of {@code ssm_out}). The MTP
 * head ({@code mtp.*}) is left out, as {@code --no-mtp} leaves it out.
 *
 * <p>Refused with a one-line reason: V heads not a multiple of the K heads, layer types other than linear/full
 * attention per layer, attention biases, an activation other than SiLU, rope scaling. Stateless.
 */
final class Qwen35Synth {
    private Qwen35Synth() {
    }

    /** The V heads reordered in units of {@code size} after {@code fixed} units, or null when nothing moves (as many K as V heads). */
    private static TensorRewrite.VHeads reorder(GatedDeltaNet.Sizes l, long fixed, long size) {
        return l.vHeads() == l.kHeads() ? null : new TensorRewrite.VHeads(fixed, l.kHeads(), l.vPerK(), size);
    }

    static void checkHfConfig(JsonNode c) {
        GatedDeltaNet.Sizes.of(c);
        JsonNode types = c.path("layer_types");
        refuseIf(!types.isArray() || types.size() != c.path("num_hidden_layers").asInt(-1), "layer_types missing or not one per layer");
        for (JsonNode t : types) {
            refuseIf(!t.asText().equals("linear_attention") && !t.asText().equals("full_attention"), "layer type " + t);
        }
        refuseIf(c.path("attention_bias").asBoolean(false), "attention biases");
        String act = c.path("hidden_act").asText("silu");
        refuseIf(!act.equals("silu"), "hidden_act " + act);
        JsonNode rope = c.path("rope_parameters");
        String type = rope.path("rope_type").asText(c.path("rope_scaling").path("rope_type").asText("default"));
        refuseIf(!type.equals("default"), "rope type " + type);
    }

    static boolean linear(JsonNode c, int layer) {
        return c.path("layer_types").path(layer).asText().equals("linear_attention");
    }

    /** The converter's {@code partial_rotary_factor} (rope parameters, else the top level, else 0.25). */
    private static double partialRotary(JsonNode c) {
        return c.path("rope_parameters").path("partial_rotary_factor").asDouble(c.path("partial_rotary_factor").asDouble(0.25));
    }

    static List<GgufKv> extraKvs(JsonNode c, String p, ConfigKeys.Dims d) {
        GatedDeltaNet.Sizes l = GatedDeltaNet.Sizes.of(c);
        List<GgufKv> out = new ArrayList<>();
        List<Object> sections = new ArrayList<>();
        JsonNode mrope = c.path("rope_parameters").path("mrope_section");
        if (mrope.isArray()) {
            mrope.forEach(s -> sections.add(s.asInt()));
        } else {
            sections.addAll(List.of(11, 11, 10));
        }
        while (sections.size() < 4) {
            sections.add(0);
        }
        out.add(new GgufKv(p + "rope.dimension_sections", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, sections), 0, 0));
        out.add(u32(p + "ssm.conv_kernel", l.conv()));
        out.add(u32(p + "ssm.state_size", l.kDim()));
        out.add(u32(p + "ssm.group_count", l.kHeads()));
        out.add(u32(p + "ssm.time_step_rank", l.vHeads()));
        out.add(u32(p + "ssm.inner_size", Math.toIntExact(l.vRows())));
        List<Object> recurrent = new ArrayList<>();
        for (int i = 0; i < d.layers(); i++) {
            recurrent.add(linear(c, i));
        }
        out.add(new GgufKv(p + "attention.recurrent_layers", GgufValueType.ARRAY, new GgufArray(GgufValueType.BOOL, recurrent), 0, 0));
        out.add(u32(p + "full_attention_interval", c.path("full_attention_interval").asInt(4)));
        out.add(u32(p + "rope.dimension_count", (int) (d.headDim() * partialRotary(c))));
        return out;
    }

    /** The per-layer GGUF tensors (suffix included) of {@code layer}: the layer type's, then the feed-forward's. */
    static List<String> requiredInLayer(int layer, JsonNode c, List<String> ffn) {
        List<String> out = new ArrayList<>(List.of("attn_norm.weight", "post_attention_norm.weight"));
        if (linear(c, layer)) {
            out.addAll(List.of("attn_qkv.weight", "attn_gate.weight", "ssm_alpha.weight", "ssm_beta.weight", "ssm_a", "ssm_dt.bias",
                    "ssm_conv1d.weight", "ssm_norm.weight", "ssm_out.weight"));
        } else {
            out.addAll(List.of("attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight", "attn_q_norm.weight",
                    "attn_k_norm.weight"));
        }
        out.addAll(ffn);
        return out;
    }

    /**
     * The HF shape of per-layer GGUF tensor {@code gguf} (without layer prefix and suffix) in {@code layer}, empty when that
     * layer has none (attention tensors in a delta-net layer and the reverse); the feed-forward's from {@code rules}.
     */
    static Optional<long[]> layerShape(List<LayerRule> rules, String gguf, int layer, JsonNode c, ConfigKeys.Dims d) {
        long h = d.hidden();
        boolean lin = linear(c, layer);
        GatedDeltaNet.Sizes l = GatedDeltaNet.Sizes.of(c);
        long q = (long) d.heads() * d.headDim();
        long kv = (long) d.headsKv() * d.headDim();
        long[] shape = switch (gguf) {
            case "attn_norm", "post_attention_norm" -> new long[] {h};
            case "attn_q" -> lin ? null : new long[] {2 * q, h};
            case "attn_k", "attn_v" -> lin ? null : new long[] {kv, h};
            case "attn_output" -> lin ? null : new long[] {h, q};
            case "attn_q_norm", "attn_k_norm" -> lin ? null : new long[] {d.headDim()};
            case "attn_qkv" -> lin ? new long[] {l.qkRows() + l.vRows(), h} : null;
            case "attn_gate" -> lin ? new long[] {l.vRows(), h} : null;
            case "ssm_alpha", "ssm_beta" -> lin ? new long[] {l.vHeads(), h} : null;
            case "ssm_a", "ssm_dt" -> lin ? new long[] {l.vHeads()} : null;
            case "ssm_conv1d" -> lin ? new long[] {l.qkRows() + l.vRows(), 1, l.conv()} : null;
            case "ssm_norm" -> lin ? new long[] {l.vDim()} : null;
            case "ssm_out" -> lin ? new long[] {h, l.vRows()} : null;
            default -> rules.stream().filter(r -> r.gguf().equals(gguf)).findFirst().map(r -> r.shape().apply(d)).orElse(null);
        };
        return Optional.ofNullable(shape);
    }

    /** What the converter does to {@code gguf} ({@code blk.N.} left out, suffix included) of {@code layer}. */
    static Optional<TensorRewrite> rewrite(String gguf, int layer, JsonNode c) {
        if (!linear(c, layer)) {
            return Optional.empty();
        }
        GatedDeltaNet.Sizes l = GatedDeltaNet.Sizes.of(c);
        TensorRewrite r = switch (gguf) {
            case "attn_qkv.weight" -> new TensorRewrite(null, reorder(l, l.qkRows(), l.vDim()), null, null);
            case "attn_gate.weight" -> new TensorRewrite(null, reorder(l, 0, l.vDim()), null, null);
            case "ssm_alpha.weight", "ssm_beta.weight", "ssm_dt.bias" -> new TensorRewrite(null, reorder(l, 0, 1), null, null);
            case "ssm_a" -> new TensorRewrite(null, reorder(l, 0, 1), null, TensorRewrite.Function.NEG_EXP);
            case "ssm_conv1d.weight" -> new TensorRewrite(new long[] {l.qkRows() + l.vRows(), l.conv()}, reorder(l, l.qkRows(), l.vDim()), null, null);
            case "ssm_out.weight" -> new TensorRewrite(null, null, reorder(l, 0, l.vDim()), null);
            default -> null;
        };
        return r == null || (r.rows() == null && r.columns() == null && r.function() == null && r.ggufShape() == null)
                ? Optional.empty() : Optional.of(r);
    }

    private static final java.util.regex.Pattern OTHER = java.util.regex.Pattern.compile(
            "model\\.layers\\.(0|[1-9][0-9]{0,8})\\.(linear_attn\\.A_log|linear_attn\\.dt_bias|mlp\\.experts\\.down_proj|mlp\\.experts\\.gate_up_proj(?:\\.weight)?)");

    /**
     * {@code A_log} → {@code ssm_a} (no suffix), {@code dt_bias} → {@code ssm_dt.bias}; with experts, the stacked
     * {@code mlp.experts.down_proj} without suffix (as transformers 5 saves it) → {@code ffn_down_exps.weight}.
     */
    static Optional<String> otherGgufName(String hfName, boolean experts) {
        java.util.regex.Matcher m = OTHER.matcher(hfName);
        if (!m.matches()) {
            return Optional.empty();
        }
        String layer = "blk." + m.group(1) + ".";
        return switch (m.group(2)) {
            case "linear_attn.A_log" -> Optional.of(layer + "ssm_a");
            case "linear_attn.dt_bias" -> Optional.of(layer + "ssm_dt.bias");
            case "mlp.experts.down_proj" -> experts ? Optional.of(layer + "ffn_down_exps.weight") : Optional.empty();
            default -> Optional.empty();
        };
    }

    /**
     * The fused experts {@code mlp.experts.gate_up_proj[.weight]} ({@code [E, 2 · moe_intermediate_size, hidden]}, as the
     * published checkpoints and {@code x/create} store them): gate rows then up rows of every expert, as the converter's
     * {@code Qwen2MoeModel.modify_tensors} cuts them into {@code ffn_gate_exps} and {@code ffn_up_exps}.
     */
    static Optional<List<String>> splitToGguf(String hfName, boolean experts) {
        java.util.regex.Matcher m = OTHER.matcher(hfName);
        if (!experts || !m.matches() || !m.group(2).startsWith("mlp.experts.gate_up_proj")) {
            return Optional.empty();
        }
        return Optional.of(List.of("blk." + m.group(1) + ".ffn_gate_exps.weight", "blk." + m.group(1) + ".ffn_up_exps.weight"));
    }

    /** The MTP head, which {@code --no-mtp} leaves out ({@code mtp.*}, {@code model.mtp.*}). */
    static boolean leftOut(String hfName) {
        return hfName.startsWith("mtp.") || hfName.startsWith("model.mtp.");
    }

    private static void refuseIf(boolean refused, String what) {
        if (refused) {
            throw new IllegalArgumentException("qwen35 " + what + " is not mapped to GGUF");
        }
    }

    private static GgufKv u32(String key, int v) {
        return new GgufKv(key, GgufValueType.UINT32, v, 0, 0);
    }
}
