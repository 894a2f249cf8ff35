package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The Gemma 3 text fields of a rebuilt {@code config.json} that are not plain key copies
 * (docs/FORMATS.md §7.4), as llama.cpp's loader reads a {@code gemma3} GGUF: sliding-window layers
 * every layer but each {@code sliding_window_pattern}-th (default 6) when
 * {@code attention.sliding_window > 0}, else none; local RoPE base {@code rope.freq_base_swa}, else
 * {@code rope.local.freq_base} (Ollama's key), else 10000; global base {@code rope.freq_base}, else
 * {@code rope.global.freq_base}, else 1e6; the query scale llama.cpp uses ({@code 1/sqrt(head_dim)}, {@code 1/sqrt(hidden/heads)}
 * for the 62-layer 27B), which a GGUF does not store, as {@code query_pre_attn_scalar}.
 *
 * <p>Invariant: only adds or replaces Gemma 3 fields; throws {@link HfUnsupported} for a layer pattern
 * given as a per-layer array (not an integer) or a non-positive pattern.
 */
final class Gemma3Config {
    private Gemma3Config() {
    }

    static void complete(ObjectNode c, GgufMeta m, String p, int hidden, int heads, int headDim) {
        int layers = (int) (long) m.integer(p + "block_count", 0L);
        long window = m.integer(p + "attention.sliding_window", 0L);
        long every = m.integer(p + "attention.sliding_window_pattern", 6L);   // an array (per layer) is refused
        if (every <= 0) {
            throw new HfUnsupported(p + "attention.sliding_window_pattern = " + every + " is not positive");
        }
        ArrayNode types = c.putArray("layer_types");
        for (int i = 0; i < layers; i++) {
            types.add(window > 0 && (i + 1) % every != 0 ? "sliding_attention" : "full_attention");
        }
        if (window > 0) {
            c.put("sliding_window", window);
            c.put("sliding_window_pattern", every);
        } else {
            c.putNull("sliding_window");
        }
        // llama.cpp's converter: rope.freq_base / rope.freq_base_swa; Ollama's: rope.global / rope.local.freq_base
        c.put("rope_local_base_freq", shortest(m.real(p + "rope.freq_base_swa", m.real(p + "rope.local.freq_base", 10000.0))));
        if (!c.has("rope_theta")) {
            c.put("rope_theta", shortest(m.real(p + "rope.global.freq_base", 1000000.0)));
        }
        c.put("query_pre_attn_scalar", layers == 62 ? hidden / heads : headDim);
        double cap = m.real(p + "final_logit_softcapping", 0.0);
        if (cap != 0) {
            c.put("final_logit_softcapping", shortest(cap));
        } else {
            c.putNull("final_logit_softcapping");
        }
        c.putNull("attn_logit_softcapping");
        c.put("hidden_activation", "gelu_pytorch_tanh");
        c.put("attention_bias", false);
    }

    /** The shortest decimal that reads back as the same f32 (GGUF floats are f32). */
    private static double shortest(double v) {
        return Double.parseDouble(Float.toString((float) v));
    }
}
