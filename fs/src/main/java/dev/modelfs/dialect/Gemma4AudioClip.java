package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.TreeSet;

/**
 * The audio half of Ollama's {@code handle_gemma4_clip} (docs/FORMATS.md §12.9): the conformer encoder ({@code a.*})
 * and its embedder ({@code mm.a.*}) that Ollama's converter ({@code convert_gemma4.go}) embeds in a gemma4 file,
 * for llama.cpp's clip loader as projector type {@code gemma4a}, in the same {@code mmproj.gguf} as the vision
 * tower (as llama.cpp's converter writes a Gemma 4 model with both). The {@code gemma4.audio.*} keys copied to
 * {@code clip.audio.*}, 128 mel bins and the text model's width as projection injected; the SSCP input projection,
 * the encoder's output projection and four per-block leaves renamed to llama.cpp's names. One step Ollama's
 * handler does not make: the SSCP input projection is widened from F16 to F32, the type llama.cpp's converter
 * gives it (an F16 weight makes ggml round the activations to F16 too, so the encoder would compute otherwise).
 *
 * <p>Invariant: {@link #problem} is checked before any edit; an encoder it finds fault with is left out whole
 * (the vision tower keeps its file), never translated in part.
 */
final class Gemma4AudioClip {
    /** Ollama's top-level renames, in its order: the SSCP projection first, so the output projection can take its name. */
    private static final String[][] TOP = {{"a.pre_encode.out.weight", "a.input_projection.weight"},
        {"mm.a.fc.weight", "a.pre_encode.out.weight"}, {"mm.a.fc.bias", "a.pre_encode.out.bias"}};
    /** Ollama's per-block renames of {@code a.blk.N.<leaf>.weight}, in its order ({@code ln2} moves before {@code layer_pre_norm} takes its name). */
    private static final String[][] BLOCK = {{"ln1", "attn_pre_norm"}, {"ln2", "attn_post_norm"}, {"layer_pre_norm", "ln2"},
        {"linear_pos", "attn_k_rel"}};
    private static final String[] U32_KEYS = {"block_count", "embedding_length", "feed_forward_length", "attention.head_count"};
    /** Gemma 4's audio preprocessing: 128 mel bins ({@code inject_u32_if_missing}). */
    static final int MEL_BINS = 128;

    private Gemma4AudioClip() {}

    /** Whether the file embeds an audio encoder at all. */
    static boolean present(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "a.");
    }

    /**
     * Why the embedded encoder cannot be translated (a key llama.cpp's clip loader needs missing or of another
     * type, a tensor it requires missing), or null when it can.
     */
    static String problem(GgufFile g) {
        for (String k : U32_KEYS) {
            String why = wrongU32(g, "gemma4.audio." + k);
            if (why != null) {
                return why;
            }
        }
        String why = wrongU32(g, "gemma4.embedding_length");
        if (why != null) {
            return why;
        }
        GgufKv eps = g.kv("gemma4.audio.attention.layer_norm_epsilon");
        if (eps != null && eps.type() != GgufValueType.FLOAT32) {
            return "gemma4.audio.attention.layer_norm_epsilon is " + eps.type() + ", not FLOAT32";
        }
        if (Markers.u32(g, "gemma4.audio.block_count") == 0) {
            return "gemma4.audio.block_count is 0";
        }
        for (String t : new String[] {"a.conv1d.0.weight", "a.conv1d.1.weight", "a.pre_encode.out.weight"}) {
            if (g.tensor(t) == null) {
                return "no " + t;
            }
        }
        return null;
    }

    private static String wrongU32(GgufFile g, String key) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return "no " + key;
        }
        return kv.type() == GgufValueType.UINT32 ? null : key + " is " + kv.type() + ", not UINT32";
    }

    /** The encoder translated into {@code e}; {@link #problem} must have returned null for {@code g}. */
    static void translate(HeaderEdit e, GgufFile g) {
        for (String k : U32_KEYS) {
            e.copy("gemma4.audio." + k, "clip.audio." + k, GgufValueType.UINT32);
        }
        e.copy("gemma4.audio.attention.layer_norm_epsilon", "clip.audio.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        e.inject("clip.audio.num_mel_bins", GgufValueType.UINT32, MEL_BINS);
        e.copy("gemma4.embedding_length", "clip.audio.projection_dim", GgufValueType.UINT32);
        e.inject("clip.has_audio_encoder", GgufValueType.BOOL, true);
        e.set("clip.audio.projector_type", GgufValueType.STRING, "gemma4a");
        for (String[] r : TOP) {
            e.rename(r[0], r[1]);
        }
        long blocks = Markers.u32(g, "gemma4.audio.block_count");
        for (long b : blocks(g, blocks)) {
            for (String[] r : BLOCK) {
                e.rename("a.blk." + b + "." + r[0] + ".weight", "a.blk." + b + "." + r[1] + ".weight");
            }
        }
        e.promoteToF32("a.input_projection.weight");
    }

    /** The block numbers below {@code limit} that some {@code a.blk.N.*} tensor of the blob has, ascending. */
    private static TreeSet<Long> blocks(GgufFile g, long limit) {
        TreeSet<Long> out = new TreeSet<>();
        for (GgufTensorInfo t : g.tensors()) {
            String n = t.name();
            if (!n.startsWith("a.blk.")) {
                continue;
            }
            int end = n.indexOf('.', 6);
            if (end <= 6 || end - 6 > 9) {
                continue;
            }
            String digits = n.substring(6, end);
            if (digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                long b = Long.parseLong(digits);
                if (b < limit) {
                    out.add(b);
                }
            }
        }
        return out;
    }
}
