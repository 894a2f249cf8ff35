package dev.modelfs.arch;

import java.util.List;
import java.util.Optional;

/**
 * How a mixture-of-experts architecture names its experts on the Hugging Face side: per expert
 * {@code model.layers.N.<prefix>.E.<proj>.weight} (how {@code save_pretrained} writes them), stacked
 * {@code model.layers.N.<prefix>.<proj>.weight} {@code [E, out, in]} (how Ollama's importer writes them),
 * and the {@code config.json} fields of the expert sizes. GGUF always stacks: {@code blk.N.ffn_<g>_exps.weight}
 * with {@code g} one of {@code gate}, {@code up}, {@code down}.
 *
 * <p>Invariants: the three HF projection names are distinct; {@code ffField} names the per-expert
 * feed-forward size; {@code sharedFfField} is null when the architecture has no shared expert; {@code hfPrefix}
 * is null when the architecture has no per-expert HF names (GraniteMoe: stacked tensors of their own names).
 */
public record Experts(String hfPrefix, String gate, String up, String down, String ffField, String sharedFfField) {

    /** The GGUF projections, in the order llama.cpp's converter writes them. */
    public static final List<String> GGUF_PROJECTIONS = List.of("gate", "up", "down");

    /** The HF projection of GGUF projection {@code g} ({@code gate}, {@code up}, {@code down}). */
    public String hfProj(String g) {
        return switch (g) {
            case "gate" -> gate;
            case "up" -> up;
            case "down" -> down;
            default -> throw new IllegalArgumentException("no expert projection " + g);
        };
    }

    /** The GGUF projection of HF projection {@code hf}, if it is one of the three. */
    public Optional<String> ggufProj(String hf) {
        return GGUF_PROJECTIONS.stream().filter(g -> hfProj(g).equals(hf)).findFirst();
    }

    /** The stacked HF tensor's per-layer name ({@code <prefix>.<proj>}) of GGUF projection {@code g}. */
    public String stackedHf(String g) {
        return hfPrefix + "." + hfProj(g);
    }
}
