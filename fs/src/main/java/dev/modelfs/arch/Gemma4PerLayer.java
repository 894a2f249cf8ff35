package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What Gemma 4's small models (E2B, E4B) have beyond {@link Gemma4}, both directions (docs/FORMATS.md §7.3, §7.4):
 * <ul>
 * <li><b>per-layer embeddings</b> ({@code hidden_size_per_layer_input} ↔ {@code embedding_length_per_layer_input} = w &gt; 0):
 * the globals {@code model.embed_tokens_per_layer} ↔ {@code per_layer_token_embd} ([vocab, layers·w]),
 * {@code model.per_layer_model_projection} ↔ {@code per_layer_model_proj} ([layers·w, hidden]),
 * {@code model.per_layer_projection_norm} ↔ {@code per_layer_proj_norm} ([w]), and in every layer
 * {@code per_layer_input_gate} ↔ {@code inp_gate} ([w, hidden]), {@code per_layer_projection} ↔ {@code proj} ([hidden, w]),
 * {@code post_per_layer_input_norm} ↔ {@code post_norm} ([hidden]); values as stored (llama.cpp's {@code gemma4.cpp} and
 * transformers' {@code Gemma4TextModel} scale and combine them alike);</li>
 * <li><b>KV sharing</b> ({@code num_kv_shared_layers} ↔ {@code attention.shared_kv_layers} = n): the last n layers have no
 * {@code k_proj}, {@code v_proj}, {@code k_norm} and read the keys of an earlier layer. transformers takes the last unshared
 * layer of the same type, llama.cpp layer {@code L - n - 2} for a sliding layer and {@code L - n - 1} for a full one: a
 * model where the two differ (or {@code L - n < 2}, which llama.cpp asserts) is refused;</li>
 * <li><b>double-wide MLPs</b> ({@code use_double_wide_mlp}): the shared layers' feed-forward is {@code 2·intermediate_size}
 * wide, which llama.cpp's converter writes as the INT32 array {@code feed_forward_length} (ff before the first shared layer,
 * 2·ff from it; an array for any other widths is refused).</li>
 * </ul>
 * Stateless; refusals throw {@link IllegalArgumentException} with a one-line reason.
 */
final class Gemma4PerLayer {
    private Gemma4PerLayer() {
    }

    /** The per-layer-embedding globals, {HF name, GGUF name} without suffix. */
    static final List<String[]> GLOBALS = List.of(new String[] {"model.embed_tokens_per_layer", "per_layer_token_embd"},
            new String[] {"model.per_layer_model_projection", "per_layer_model_proj"},
            new String[] {"model.per_layer_projection_norm", "per_layer_proj_norm"});
    /**
     * The per-layer-embedding tensors of every layer, after llama.cpp's others. Their shapes depend on
     * {@code hidden_size_per_layer_input}, which {@link ConfigKeys.Dims} does not hold: {@link #layerShape} gives them.
     */
    static final List<LayerRule> LAYERS = List.of(
            new LayerRule("per_layer_input_gate", "inp_gate", Gemma4PerLayer::fromConfig),
            new LayerRule("per_layer_projection", "proj", Gemma4PerLayer::fromConfig),
            LayerRule.norm("post_per_layer_input_norm", "post_norm"));
    private static final Set<String> PER_LAYER = Set.of("inp_gate", "proj", "post_norm");
    /** What a KV-sharing layer has none of (transformers builds none, llama.cpp reads none). */
    private static final Set<String> KV = Set.of("attn_k", "attn_v", "attn_k_norm");
    private static final Set<String> FFN = Set.of("ffn_gate", "ffn_up", "ffn_down");
    private static final String FF = "feed_forward_length";

    private static long[] fromConfig(ConfigKeys.Dims d) {
        throw new IllegalStateException("the per-layer input width is config.json's: Gemma4PerLayer.layerShape");
    }

    // ---- Hugging Face → GGUF

    /** The per-layer input width w (0: none). */
    static int width(JsonNode c) {
        return nonNegative(c, "hidden_size_per_layer_input");
    }

    /** The number n of KV-sharing layers at the end. */
    static int shared(JsonNode c) {
        return nonNegative(c, "num_kv_shared_layers");
    }

    /** Whether layer {@code layer} of {@code layers} reads another layer's keys and values ({@code n} shared). */
    static boolean sharesKv(int layer, int layers, int n) {
        return n > 0 && layer >= layers - n;
    }

    /** Refuses what llama.cpp would run differently from transformers (sharing, a per-layer vocabulary of another size). */
    static void checkHfConfig(JsonNode c) {
        int w = width(c), n = shared(c), layers = c.path("num_hidden_layers").asInt(0);
        if (w > 0 && c.hasNonNull("vocab_size_per_layer_input")
                && c.path("vocab_size_per_layer_input").asLong() != c.path("vocab_size").asLong()) {
            throw new IllegalArgumentException("gemma4 vocab_size_per_layer_input " + c.get("vocab_size_per_layer_input")
                    + " is not vocab_size (llama.cpp reads per_layer_token_embd with the vocabulary's rows)");
        }
        if (n >= layers && n > 0) {
            throw new IllegalArgumentException("gemma4 num_kv_shared_layers " + n + " of " + layers + " layers");
        }
        boolean[] sliding = new boolean[layers];
        for (int i = 0; i < layers; i++) {
            sliding[i] = Gemma4Synth.sliding(c, i);
        }
        checkSharing(sliding, n);
    }

    /** {@code attention.shared_kv_layers}, {@code embedding_length_per_layer_input}, and the double-wide feed-forward widths. */
    static List<GgufKv> extraKvs(JsonNode c, String p, ConfigKeys.Dims d) {
        List<GgufKv> out = new ArrayList<>();
        int n = shared(c);
        out.add(new GgufKv(p + "attention.shared_kv_layers", GgufValueType.UINT32, n, 0, 0));
        out.add(new GgufKv(p + "embedding_length_per_layer_input", GgufValueType.UINT32, width(c), 0, 0));
        if (c.path("use_double_wide_mlp").asBoolean(false)) {   // the converter writes the array whenever the flag is set
            List<Object> ff = new ArrayList<>();
            for (int i = 0; i < d.layers(); i++) {
                ff.add(sharesKv(i, d.layers(), n) ? 2 * d.ff() : d.ff());
            }
            out.add(new GgufKv(p + FF, GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, ff), 0, 0));
        }
        return out;
    }

    /** The HF shape of per-layer tensor {@code gguf} of {@code layer} when this class decides it (per-layer embeddings, double-wide MLPs). */
    static Optional<long[]> layerShape(String gguf, int layer, JsonNode c, ConfigKeys.Dims d) {
        long w = width(c);
        if (PER_LAYER.contains(gguf)) {
            return w == 0 ? Optional.empty() : Optional.of(switch (gguf) {
                case "inp_gate" -> new long[] {w, d.hidden()};
                case "proj" -> new long[] {d.hidden(), w};
                default -> new long[] {d.hidden()};
            });
        }
        if (FFN.contains(gguf) && c.path("use_double_wide_mlp").asBoolean(false) && sharesKv(layer, d.layers(), shared(c))) {
            long ff = 2L * d.ff();
            return Optional.of(gguf.equals("ffn_down") ? new long[] {d.hidden(), ff} : new long[] {ff, d.hidden()});
        }
        return Optional.empty();
    }

    /** The HF shape of global GGUF tensor {@code gguf} (with suffix) among the per-layer-embedding ones, when the model has them. */
    static Optional<long[]> globalShape(String gguf, JsonNode c, ConfigKeys.Dims d) {
        long w = width(c);
        if (w == 0) {
            return Optional.empty();
        }
        return switch (gguf) {
            case "per_layer_token_embd.weight" -> Optional.of(new long[] {d.vocab(), d.layers() * w});
            case "per_layer_model_proj.weight" -> Optional.of(new long[] {d.layers() * w, d.hidden()});
            case "per_layer_proj_norm.weight" -> Optional.of(new long[] {w});
            default -> Optional.empty();
        };
    }

    /** Whether llama.cpp requires {@code blk.<layer>.<gguf>.weight}: not the KV tensors of a sharing layer, the per-layer ones only with a width. */
    static boolean requires(String gguf, int layer, JsonNode c) {
        if (PER_LAYER.contains(gguf)) {
            return width(c) > 0;
        }
        return !(KV.contains(gguf) && sharesKv(layer, c.path("num_hidden_layers").asInt(0), shared(c)));
    }

    /** The globals llama.cpp requires beyond the token embedding and output norm. */
    static List<String> requiredGlobals(JsonNode c) {
        return width(c) == 0 ? List.of() : GLOBALS.stream().map(g -> g[1] + ".weight").toList();
    }

    // ---- GGUF → Hugging Face

    /** Whether {@code <arch>.<suffix>} may be a per-layer array that {@link #completeHfConfig} maps. */
    static boolean mapsArray(String suffix) {
        return suffix.equals(FF);
    }

    /** Refuses per-layer embeddings without their tensors, sharing transformers would run differently, other per-layer widths. */
    static void checkGguf(GgufParams m, String p, boolean[] sliding) {
        int layers = sliding.length;
        long w = m.integer(p + "embedding_length_per_layer_input", 0L);
        if (w > 0) {
            List<String> need = new ArrayList<>(GLOBALS.stream().map(g -> g[1] + ".weight").toList());
            for (int i = 0; i < layers; i++) {
                for (String t : PER_LAYER) {
                    need.add("blk." + i + "." + t + ".weight");
                }
            }
            for (String t : need) {
                if (!m.hasTensor(t)) {
                    throw new IllegalArgumentException("gemma4 with per-layer embeddings has no " + t);
                }
            }
        }
        long n = m.integer(p + "attention.shared_kv_layers", 0L);
        if (n < 0 || (n > 0 && n >= layers)) {
            throw new IllegalArgumentException("gemma4 " + p + "attention.shared_kv_layers = " + n + " of " + layers + " layers");
        }
        checkSharing(sliding, (int) n);
        ffWidths(m, p, layers, (int) n);
    }

    /** Whether layer {@code layer} of GGUF {@code m} shares another layer's keys and values. */
    static boolean sharesKv(GgufParams m, String p, int layer) {
        return sharesKv(layer, (int) (long) m.integer(p + "block_count", 0L), (int) (long) m.integer(p + "attention.shared_kv_layers", 0L));
    }

    /**
     * {@code feed_forward_length} as {intermediate_size, double-wide (0/1)}: a scalar, or an array of {@code layers} entries equal
     * to its first before layer {@code L - n} and twice it from there (any other array is refused).
     */
    private static int[] ffWidths(GgufParams m, String p, int layers, int n) {
        if (!m.isArray(p + FF)) {
            return null;
        }
        int[] ff = m.ints(p + FF);
        boolean same = true, doubled = n > 0;
        if (ff.length != layers || ff.length == 0 || ff[0] <= 0) {
            throw new IllegalArgumentException("gemma4 " + p + FF + " is an array of " + ff.length + " entries for " + layers + " layers");
        }
        for (int i = 0; i < layers; i++) {
            same &= ff[i] == ff[0];
            doubled &= ff[i] == (sharesKv(i, layers, n) ? 2L * ff[0] : ff[0]);
        }
        if (!same && !doubled) {
            throw new IllegalArgumentException("gemma4 per-layer " + p + FF + " other than use_double_wide_mlp's (twice as wide in the "
                    + n + " KV-sharing layers) is not mapped");
        }
        return new int[] {ff[0], same ? 0 : 1};
    }

    /** {@code hidden_size_per_layer_input}, {@code num_kv_shared_layers}, {@code use_double_wide_mlp} (and the width it doubles). */
    static void completeHfConfig(ObjectNode c, GgufParams m, String p) {
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        int n = (int) (long) m.integer(p + "attention.shared_kv_layers", 0L);
        c.put("hidden_size_per_layer_input", m.integer(p + "embedding_length_per_layer_input", 0L));
        c.put("num_kv_shared_layers", n);
        int[] ff = ffWidths(m, p, layers, n);
        if (ff != null) {
            c.put("intermediate_size", ff[0]);
        }
        c.put("use_double_wide_mlp", ff != null && ff[1] == 1);
    }

    /**
     * Refuses KV sharing of the last {@code n} layers that llama.cpp and transformers would read from different layers
     * ({@code sliding}: per layer, whether it is a sliding-window layer).
     */
    static void checkSharing(boolean[] sliding, int n) {
        if (n == 0) {
            return;
        }
        int first = sliding.length - n;
        if (first < 2) {
            throw new IllegalArgumentException("gemma4 KV sharing of " + n + " of " + sliding.length + " layers (llama.cpp needs two layers of its own)");
        }
        for (int il = first; il < sliding.length; il++) {
            int llama = first - (sliding[il] ? 2 : 1);
            int hf = first - 1;
            while (hf >= 0 && sliding[hf] != sliding[il]) {
                hf--;
            }
            if (hf != llama) {
                throw new IllegalArgumentException("gemma4 KV-sharing layer " + il + " reads " + (hf < 0 ? "no layer" : "layer " + hf)
                        + " in transformers, layer " + llama + " in llama.cpp (the last unshared layers must be sliding then full)");
            }
        }
    }

    private static int nonNegative(JsonNode c, String field) {
        JsonNode v = c.get(field);
        if (v == null || v.isNull()) {
            return 0;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < 0) {
            throw new IllegalArgumentException("gemma4 config.json " + field + " = " + v + " is not a non-negative integer");
        }
        return v.intValue();
    }
}
