package dev.modelfs.arch;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The multi-token-prediction (MTP, "NextN") layers llama.cpp's converter appends after a model's text layers: GGUF
 * {@code block_count} counts them and {@code nextn_predict_layers} says how many of the last blocks they are (Qwen 3.5's
 * {@code mtp.*} head, GLM-OCR's published layer 16). transformers' text classes have no tensor for them and load
 * without them, so the Hugging Face folder leaves their every tensor out ({@link ArchSpec#hfLeavesOut}) and its
 * {@code num_hidden_layers} is {@link #textLayers}.
 *
 * <p>Invariant: {@link #textLayers} is at least 1 (a GGUF whose MTP layers are all of its blocks, or a negative count, is
 * refused with the reason).
 */
final class NextnLayers {
    private NextnLayers() {
    }

    private static final Pattern LAYER = Pattern.compile("blk\\.(0|[1-9][0-9]{0,8})\\..+");

    /** Text layers: {@code block_count} less the MTP layers ({@code nextn_predict_layers}, 0 when absent). */
    static int textLayers(GgufParams m, String p) {
        long blocks = m.integer(p + "block_count", 0L);
        long mtp = m.integer(p + "nextn_predict_layers", 0L);
        if (blocks <= 0 || mtp < 0 || mtp >= blocks || blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(p + "block_count " + blocks + " with " + mtp + " MTP layers");
        }
        return Math.toIntExact(blocks - mtp);
    }

    /** Whether GGUF tensor {@code ggufName} belongs to an MTP layer (a {@code blk.N.*} from {@link #textLayers} on). */
    static boolean mtp(String ggufName, GgufParams m, String p) {
        Matcher x = LAYER.matcher(ggufName);
        return x.matches() && Long.parseLong(x.group(1)) >= textLayers(m, p);
    }
}
