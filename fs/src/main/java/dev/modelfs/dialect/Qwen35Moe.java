package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;

/**
 * Qwen 3.5 / 3.6 MoE ({@code qwen35moe}) as Ollama published it: Ollama's {@code detect_ollama_qwen35moe} /
 * {@code handle_qwen35moe} (docs/FORMATS.md §12.8), the text fixes of {@link Qwen35} with the MTP layer's
 * per-expert tensors stacked; {@code qwen35moe.feed_forward_length} (which llama.cpp's converter does not write
 * for the MoE) is one more marker.
 */
public record Qwen35Moe() implements DialectHandler {
    @Override
    public String name() {
        return "qwen35moe";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "qwen35moe") && (Markers.has(g, "qwen35moe.vision.block_count")
                || Markers.has(g, "qwen35moe.image_token_id") || Markers.has(g, "qwen35moe.ssm.v_head_reordered")
                || Markers.has(g, "qwen35moe.feed_forward_length") || Markers.has(g, "qwen35moe.rope.mrope_interleaved")
                || Markers.anyTensorWithPrefix(g, "mtp.") || Markers.anyTensorWithPrefix(g, "v."));
    }

    @Override
    public Translation translate(GgufFile g) {
        return Qwen35.textFixes(g, "qwen35moe", name(), true);
    }

    @Override
    public Translation forViews(GgufFile g) {
        return Qwen35.textFixes(g, "qwen35moe", name(), false);
    }
}
