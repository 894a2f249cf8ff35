package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Qwen 3.5 / 3.6's hybrid layers (GGUF {@code qwen35}, {@code qwen35moe}; transformers' {@code Qwen3_5*} classes) as
 * llama.cpp's converter writes them ({@code Qwen3NextModel.modify_tensors} and {@code _LinearAttentionVReorderBase},
 * docs/FORMATS.md §7.3): gated delta-net (linear attention) layers and full-attention layers with a gated query
 * ({@code q_proj} rows: per head the query, then its gate) and per-head q/k norms, the norms stored as {@code 1 + w}
 * except the delta net's gated {@code ssm_norm}, {@code ssm_a = -exp(A_log)}, the V heads reordered from grouped to tiled
 * (rows of {@code attn_qkv}'s V part, {@code attn_gate}, {@code ssm_alpha}/{@code ssm_beta}, {@code ssm_a}, {@code ssm_dt},
 * the V conv channels; the columns of {@code ssm_out}), the conv kernel squeezed to {@code [channels, kernel]}, and the MTP
 * head appended as {@code nextn_predict_layers} layers after the text ones ({@link NextnLayers}: left out of the Hugging
 * Face folder, which transformers loads without them).
 */
final class GatedDeltaNet {
    private GatedDeltaNet() {
    }

    private static final Pattern LAYER = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\.(.+)");

    /** The delta net's tensors with a {@code .weight} (shapes: {@link Qwen35Synth#layerShape}, from the linear-attention sizes). */
    static final List<LayerRule> LINEAR = List.of(
            new LayerRule("linear_attn.in_proj_qkv", "attn_qkv", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.in_proj_z", "attn_gate", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.in_proj_b", "ssm_beta", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.in_proj_a", "ssm_alpha", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.conv1d", "ssm_conv1d", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.norm", "ssm_norm", GatedDeltaNet::needsConfig),
            new LayerRule("linear_attn.out_proj", "ssm_out", GatedDeltaNet::needsConfig));
    /** The full-attention layers: the gated query (twice the heads' rows), k, v, o and the per-head q/k norms. */
    static final List<LayerRule> ATTENTION = Layers.of(List.of(
            new LayerRule("self_attn.q_proj", "attn_q", d -> new long[] {2 * Layers.q(d), d.hidden()}),
            Layers.ATTENTION.get(1), Layers.ATTENTION.get(2), Layers.OUTPUT), Layers.QK_NORMS);
    /** The norms around every layer's mixer (GGUF {@code post_attention_norm}, not {@code ffn_norm}). */
    static final List<LayerRule> NORMS = List.of(Layers.ATTN_NORM, LayerRule.norm("post_attention_layernorm", "post_attention_norm"));

    private static long[] needsConfig(ConfigKeys.Dims d) {
        throw new IllegalArgumentException("a gated delta-net tensor's shape needs config.json's linear_* sizes (ArchSpec.layerShape)");
    }

    /** The linear-attention sizes. */
    record Sizes(int kHeads, int vHeads, int kDim, int vDim, int conv) {
        Sizes {
            if (kHeads <= 0 || vHeads <= 0 || kDim <= 0 || vDim <= 0 || conv <= 0 || vHeads % kHeads != 0) {
                throw new IllegalArgumentException("gated delta-net sizes: " + kHeads + " key heads, " + vHeads + " value heads of "
                        + kDim + "/" + vDim + ", conv " + conv + " (value heads must be a multiple of key heads)");
            }
        }

        int vPerK() {
            return vHeads / kHeads;
        }

        long qkRows() {
            return 2L * kHeads * kDim;
        }

        long vRows() {
            return (long) vHeads * vDim;
        }

        /** The sizes of a GGUF ({@code ssm.*}, as {@code Qwen3NextModel.set_gguf_parameters} writes them). */
        static Sizes of(GgufParams m, String p) {
            long rank = req(m, p + "ssm.time_step_rank");
            long inner = req(m, p + "ssm.inner_size");
            if (inner % rank != 0) {
                throw new IllegalArgumentException(p + "ssm.inner_size " + inner + " is not a multiple of ssm.time_step_rank " + rank);
            }
            return new Sizes(Math.toIntExact(req(m, p + "ssm.group_count")), Math.toIntExact(rank),
                    Math.toIntExact(req(m, p + "ssm.state_size")), Math.toIntExact(inner / rank), Math.toIntExact(req(m, p + "ssm.conv_kernel")));
        }

        /** The sizes of a {@code config.json} ({@code linear_*}). */
        static Sizes of(JsonNode c) {
            return new Sizes(c.path("linear_num_key_heads").asInt(0), c.path("linear_num_value_heads").asInt(0),
                    c.path("linear_key_head_dim").asInt(0), c.path("linear_value_head_dim").asInt(0), c.path("linear_conv_kernel_dim").asInt(0));
        }

        private static long req(GgufParams m, String key) {
            Long v = m.integer(key, null);
            if (v == null || v <= 0 || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(key + (v == null ? " is missing" : " = " + v + " is out of range"));
            }
            return v;
        }
    }

    /** Whether the V heads are tiled: always in llama.cpp's conversion; Ollama's says so with {@code ssm.v_head_reordered}. */
    private static boolean reordered(GgufParams m, String p, Sizes s) {
        return s.vPerK() > 1 && m.bool(p + "ssm.v_head_reordered", Boolean.TRUE);
    }

    /** {@link ArchSpec#hfLayout} for the delta net's tensors. */
    static Optional<HfLayout> hfLayout(String ggufName, long[] ne, GgufParams m, String p) {
        Matcher x = LAYER.matcher(ggufName);
        if (!x.matches()) {
            return Optional.empty();
        }
        String hf = "model.layers." + x.group(1) + ".linear_attn.";
        String rest = x.group(2);
        if (!rest.startsWith("attn_qkv.") && !rest.startsWith("attn_gate.") && !rest.startsWith("ssm_")) {
            return Optional.empty();
        }
        Sizes s = Sizes.of(m, p);
        boolean tiled = reordered(m, p, s);
        long rows = ne.length == 1 ? ne[0] : ne[1];
        return Optional.of(switch (rest) {
            case "attn_qkv.weight" -> rows(hf + "in_proj_qkv.weight", ne, 2, s.qkRows() + s.vRows(), tiled ? new VHeadOrder(s.qkRows(), s.kHeads(), s.vPerK(), s.vDim(), rows) : null);
            case "attn_gate.weight" -> rows(hf + "in_proj_z.weight", ne, 2, s.vRows(), tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), s.vDim(), rows) : null);
            case "ssm_alpha.weight" -> rows(hf + "in_proj_a.weight", ne, 2, s.vHeads(), tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), 1, rows) : null);
            case "ssm_beta.weight" -> rows(hf + "in_proj_b.weight", ne, 2, s.vHeads(), tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), 1, rows) : null);
            case "ssm_dt.bias" -> rows(hf + "dt_bias", ne, 1, s.vHeads(), tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), 1, rows) : null);
            case "ssm_a" -> {
                HfLayout a = rows(hf + "A_log", ne, 1, s.vHeads(), tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), 1, rows) : null);
                yield new HfLayout(a.hfName(), a.shape(), a.rows(), a.rowOrder(), null, ElementMap.LOG_OF_NEG);
            }
            case "ssm_norm.weight" -> rows(hf + "norm.weight", ne, 1, s.vDim(), null);   // gated RMSNorm: stored as w, no shift
            case "ssm_conv1d.weight" -> {
                if (ne.length != 2 || ne[0] != s.conv() || ne[1] != s.qkRows() + s.vRows()) {
                    throw new IllegalArgumentException(ggufName + " " + java.util.Arrays.toString(ne) + " is not [conv kernel, q+k+v channels]");
                }
                yield new HfLayout(hf + "conv1d.weight", new long[] {ne[1], 1, ne[0]}, ne[1],
                        tiled ? new VHeadOrder(s.qkRows(), s.kHeads(), s.vPerK(), s.vDim(), ne[1]) : null, null, ElementMap.NONE);
            }
            case "ssm_out.weight" -> {
                if (ne.length != 2 || ne[0] != s.vRows()) {
                    throw new IllegalArgumentException(ggufName + " " + java.util.Arrays.toString(ne) + " does not read the " + s.vRows() + " V values");
                }
                yield new HfLayout(hf + "out_proj.weight", new long[] {ne[1], ne[0]}, ne[1], null,
                        tiled ? new VHeadOrder(0, s.kHeads(), s.vPerK(), 1, s.vHeads()).blocks() : null, ElementMap.NONE);
            }
            default -> throw new IllegalArgumentException(ggufName + ": no Hugging Face tensor of a gated delta-net is named so");
        });
    }

    /** A tensor of {@code rank} dimensions whose rows (of {@code ne[0]} elements) are reordered by {@code order}. */
    private static HfLayout rows(String hf, long[] ne, int rank, long rows, VHeadOrder order) {
        if (ne.length != rank || (rank == 1 ? ne[0] : ne[1]) != rows) {
            throw new IllegalArgumentException(hf + ": GGUF shape " + java.util.Arrays.toString(ne) + " does not have " + rows
                    + (rank == 1 ? " values" : " rows"));
        }
        return new HfLayout(hf, rank == 1 ? new long[] {ne[0]} : new long[] {ne[1], ne[0]}, rows, order, null, ElementMap.NONE);
    }

    /** Refuses a GGUF whose rope or layer layout this mapping does not rebuild. */
    static void checkGguf(GgufParams m, String p) {
        Sizes.of(m, p);
        int layers = NextnLayers.textLayers(m, p);
        MropeText.checkSections(m, p);
        boolean[] recurrent = m.bools(p + "attention.recurrent_layers");
        if (recurrent == null && m.integer(p + "full_attention_interval", null) == null) {
            throw new IllegalArgumentException(p + ": neither attention.recurrent_layers nor full_attention_interval says which layers are linear");
        }
        if (recurrent != null && recurrent.length < layers) {
            throw new IllegalArgumentException(p + "attention.recurrent_layers has " + recurrent.length + " entries for " + layers + " layers");
        }
    }

    /**
     * The {@code config.json} fields of a {@code Qwen3_5*TextConfig}: the text layers, their types, the linear-attention
     * sizes and the rope parameters (partial rotation, M-RoPE sections, which are plain rope on text).
     */
    static void completeHfConfig(ObjectNode c, GgufParams m, String p, int headDim) {
        int layers = NextnLayers.textLayers(m, p);
        Sizes s = Sizes.of(m, p);
        c.put("num_hidden_layers", layers);
        boolean[] recurrent = m.bools(p + "attention.recurrent_layers");
        long interval = m.integer(p + "full_attention_interval", 4L);
        ArrayNode types = c.putArray("layer_types");
        for (int i = 0; i < layers; i++) {
            boolean linear = recurrent != null ? recurrent[i] : (i + 1) % interval != 0;
            types.add(linear ? "linear_attention" : "full_attention");
        }
        c.put("linear_conv_kernel_dim", s.conv());
        c.put("linear_key_head_dim", s.kDim());
        c.put("linear_value_head_dim", s.vDim());
        c.put("linear_num_key_heads", s.kHeads());
        c.put("linear_num_value_heads", s.vHeads());
        long rotated = m.integer(p + "rope.dimension_count", (long) headDim);
        double partial = GemmaVocab.shortest((double) rotated / headDim);
        c.put("partial_rotary_factor", partial);
        ObjectNode rope = c.putObject("rope_parameters");
        rope.put("rope_type", "default");
        if (c.has("rope_theta")) {
            rope.set("rope_theta", c.remove("rope_theta"));
        }
        rope.put("partial_rotary_factor", partial);
        int[] sections = m.ints(p + "rope.dimension_sections");
        if (sections != null && sections.length >= 3) {
            ArrayNode sec = rope.putArray("mrope_section");
            for (int i = 0; i < 3; i++) {
                sec.add(sections[i]);
            }
            rope.put("mrope_interleaved", true);
        }
        c.put("attention_bias", false);
    }
}
