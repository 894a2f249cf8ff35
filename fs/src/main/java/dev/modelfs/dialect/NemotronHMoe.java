package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Nemotron-H MoE ({@code nemotron_h_moe}) as Ollama's {@code convert_nemotron_h.go} writes it: Ollama's
 * {@code detect_ollama_nemotron_h_moe} / {@code handle_nemotron_h_moe} (docs/FORMATS.md §12.16). The architecture
 * name is llama.cpp's; the dialect is in the latent-FFN variants (Nemotron 3 Super: the latent projections named
 * {@code ffn_latent_in} / {@code ffn_latent_out}, no {@code moe_latent_size} key) and in the MTP head Ollama's
 * converter keeps ({@code mtp.*}, one tensor per expert), which llama.cpp's loader does not claim.
 *
 * <p>Markers: architecture {@code nemotron_h_moe} and a tensor {@code blk.N.ffn_latent_in*} (Ollama looks at blocks 0
 * and 1, where Nemotron 3 Super's first MoE layer is; any block counts here, since upstream llama.cpp loads no such
 * name) or {@code mtp.*}. Refused: a latent tensor that is not 2-D or whose latent width differs from
 * {@code moe_latent_size} (the key as stored, or as injected from the first block's {@code ffn_latent_in}).
 */
public record NemotronHMoe() implements DialectHandler {
    static final String ARCH = "nemotron_h_moe";
    private static final String LATENT_KEY = ARCH + ".moe_latent_size";
    private static final Pattern LATENT_IN = Pattern.compile("blk\\.(\\d+)\\.ffn_latent_in\\.weight");

    @Override
    public String name() {
        return ARCH;
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH) && (Markers.anyTensorWithPrefix(g, "mtp.")
                || g.tensors().stream().anyMatch(t -> t.name().startsWith("blk.") && t.name().contains(".ffn_latent_in")));
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        fix(g, e);
        return e.build(name(), face());
    }

    /**
     * {@code handle_nemotron_h_moe}'s edits on {@code e} (Ollama's omni handler calls them too): {@code moe_latent_size} injected from the first block's {@code ffn_latent_in} rows
     * ({@code ne[1]}) when absent, the latent projections renamed {@code ffn_latent_down} / {@code ffn_latent_up},
     * {@code mtp.*} left out.
     */
    static void fix(GgufFile g, HeaderEdit e) {
        if (!e.has(LATENT_KEY)) {
            GgufTensorInfo first = null;
            long firstBlock = Long.MAX_VALUE;
            for (GgufTensorInfo t : g.tensors()) {
                Matcher m = LATENT_IN.matcher(t.name());
                if (m.matches() && Long.parseLong(m.group(1)) < firstBlock) {
                    firstBlock = Long.parseLong(m.group(1));
                    first = t;
                }
            }
            if (first != null) {
                e.set(LATENT_KEY, GgufValueType.UINT32, (int) checkedLatent(first, 1, -1));
            }
        }
        long latent = latentSize(e);
        for (GgufTensorInfo t : g.tensors()) {
            if (!t.name().startsWith("blk.")) {
                continue;
            }
            if (t.name().contains(".ffn_latent_in")) {
                checkedLatent(t, 1, latent);
            } else if (t.name().contains(".ffn_latent_out")) {
                checkedLatent(t, 0, latent);
            }
        }
        e.dropWithPrefix("mtp.", "MTP head (the nemotron_h_moe loader does not claim it)");
        e.renameContaining(".ffn_latent_in", ".ffn_latent_down");
        e.renameContaining(".ffn_latent_out", ".ffn_latent_up");
    }

    /** {@code moe_latent_size} of the working copy, -1 when absent; refused when not a (U)INT32 or negative. */
    private static long latentSize(HeaderEdit e) {
        GgufKv kv = e.kv(LATENT_KEY);
        if (kv == null) {
            return -1;
        }
        if ((kv.type() != GgufValueType.UINT32 && kv.type() != GgufValueType.INT32) || (kv.type() == GgufValueType.INT32 && (Integer) kv.value() < 0)) {
            throw new FormatException(LATENT_KEY + " is " + kv.type() + " " + kv.value() + ", not a UINT32");
        }
        return Integer.toUnsignedLong((Integer) kv.value());
    }

    /** The latent width of a latent projection ({@code ne[axis]}), required 2-D and equal to {@code want} when known. */
    private static long checkedLatent(GgufTensorInfo t, int axis, long want) {
        if (t.ne().length != 2 || t.ne()[axis] <= 0 || t.ne()[axis] > Integer.MAX_VALUE) {
            throw new FormatException(t.name() + " has dimensions " + Arrays.toString(t.ne()) + ", not a 2-D latent projection");
        }
        if (want >= 0 && t.ne()[axis] != want) {
            throw new FormatException(t.name() + " has a latent width of " + t.ne()[axis] + ", " + LATENT_KEY + " is " + want);
        }
        return t.ne()[axis];
    }
}
