package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * gpt-oss as Ollama's converter writes it ({@code convert/convert_gptoss.go}): Ollama's {@code detect_ollama_gptoss}
 * and {@code handle_gptoss} (docs/FORMATS.md §12.6). The architecture {@code gptoss} becomes llama.cpp's
 * {@code gpt-oss} (its keys copied to the new prefix), the expert FFN length recovered from
 * {@code blk.0.ffn_gate_exps.weight}, YaRN and the {@code gpt-4o} pre-tokenizer set, three tensor renames.
 */
public record GptOss() implements DialectHandler {
    @Override
    public String name() {
        return "gptoss";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "gptoss");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture("gptoss", "gpt-oss");
        if (!e.has("gpt-oss.expert_feed_forward_length")) {
            GgufTensorInfo gate = g.tensor("blk.0.ffn_gate_exps.weight");
            if (gate == null || gate.rank() < 2) {
                throw new FormatException("no gpt-oss.expert_feed_forward_length and no 2-D or larger blk.0.ffn_gate_exps.weight");
            }
            e.set("gpt-oss.expert_feed_forward_length", GgufValueType.UINT32, (int) gate.ne()[1]);
        }
        e.inject("gpt-oss.rope.scaling.type", GgufValueType.STRING, "yarn");
        e.set("tokenizer.ggml.pre", GgufValueType.STRING, "gpt-4o");
        e.renameContaining(".attn_out", ".attn_output");
        e.renameContaining(".attn_sinks", ".attn_sinks.weight");
        e.renameContaining(".ffn_norm", ".post_attention_norm");
        return e.build(name(), face());
    }
}
