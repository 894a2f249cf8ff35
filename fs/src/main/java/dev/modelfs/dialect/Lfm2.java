package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * LFM2 as Ollama's converter writes it: Ollama's {@code detect_ollama_lfm2} / {@code handle_lfm2} (docs/FORMATS.md
 * §12.6). Marker: {@code output_norm.weight} without {@code token_embd_norm.weight}. The norm renamed to the name
 * llama.cpp reads, the {@code lfm2} pre-tokenizer set, {@code lfm2.feed_forward_length} taken from
 * {@code blk.0.ffn_gate.weight}'s shape when it differs.
 */
public record Lfm2() implements DialectHandler {
    @Override
    public String name() {
        return "lfm2";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "lfm2") && g.tensor("output_norm.weight") != null && g.tensor("token_embd_norm.weight") == null;
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.rename("output_norm.weight", "token_embd_norm.weight");
        e.set("tokenizer.ggml.pre", GgufValueType.STRING, "lfm2");
        GgufTensorInfo gate = g.tensor("blk.0.ffn_gate.weight");
        if (gate != null && gate.rank() >= 2) {
            int ff = (int) gate.ne()[1];
            GgufKv kv = g.kv("lfm2.feed_forward_length");
            if (kv == null || kv.type() != GgufValueType.UINT32 || (Integer) kv.value() != ff) {
                e.set("lfm2.feed_forward_length", GgufValueType.UINT32, ff);
            }
        }
        return e.build(name(), face());
    }
}
