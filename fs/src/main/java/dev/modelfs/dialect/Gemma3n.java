package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;

/**
 * Gemma 3n as Ollama's converter writes it ({@code convert/convert_gemma3n.go}): the tokenizer arrays and
 * {@code token_embd.weight} carry the multimodal vocabulary (262400 in the published files), the per-layer embeddings
 * {@code per_layer_token_embd.weight} only the text vocabulary (262144), which llama.cpp's loader refuses. Ollama's
 * {@code detect_ollama_gemma3n} and {@code handle_gemma3n} (docs/FORMATS.md §12.6): {@code tokenizer.ggml.model} set to
 * {@code llama}, {@code token_embd.weight} cut to the per-layer rows (a prefix of its bytes), the tokenizer arrays cut
 * alike, byte tokens {@code <0xXX>} typed BYTE (6) and {@code <unused...>} tokens NORMAL (1), and end-of-turn (106)
 * added to {@code tokenizer.ggml.eos_token_ids} ({@code [1, 106]} when absent); and, beyond Ollama's handler,
 * {@code tokenizer.ggml.add_space_prefix = false} when absent (Gemma's SentencePiece has no dummy prefix; without the
 * key llama.cpp prepends a space to every text). Ollama's converter already leaves the
 * vision and audio towers out of the file, so nothing is dropped.
 */
public record Gemma3n() implements DialectHandler {
    static final int END_OF_TURN = 106;
    static final int TYPE_NORMAL = 1;
    static final int TYPE_BYTE = 6;
    /**
     * Not in Ollama's {@code handle_gemma3n}: Ollama's converter writes no {@code add_space_prefix}, and llama.cpp's
     * SentencePiece vocabulary then prepends a space to every text, which Gemma's tokenizer (no dummy prefix) does
     * not; set false when absent, as llama.cpp's converter writes it for every Gemma (the dialect fixture).
     */
    static final String ADD_SPACE_PREFIX = "tokenizer.ggml.add_space_prefix";

    @Override
    public String name() {
        return "gemma3n";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_gemma3n}: architecture {@code gemma3n}, both embeddings, different row counts. */
    @Override
    public boolean matches(GgufFile g) {
        GgufTensorInfo te = g.tensor("token_embd.weight");
        GgufTensorInfo pe = g.tensor("per_layer_token_embd.weight");
        return Markers.architecture(g, "gemma3n") && te != null && pe != null && te.rank() >= 2 && pe.rank() >= 2
                && te.ne()[1] != pe.ne()[1];
    }

    /**
     * @throws FormatException when the per-layer embedding has more rows than {@code token_embd.weight} or the
     *                         vocabulary (a cut cannot add rows), or a tokenizer array is not of its type
     */
    @Override
    public Translation translate(GgufFile g) {
        long target = g.tensor("per_layer_token_embd.weight").ne()[1];
        long tokens = Gemma3Text.arrayLength(g, "tokenizer.ggml.tokens");
        if (tokens < target) {
            throw new FormatException("tokenizer.ggml.tokens has " + tokens + " entries for " + target + " per-layer embedding rows");
        }
        HeaderEdit e = new HeaderEdit(g);
        e.set("tokenizer.ggml.model", GgufValueType.STRING, "llama");
        e.keepFirstRows("token_embd.weight", target);
        e.truncateArray("tokenizer.ggml.tokens", target);
        e.truncateArray("tokenizer.ggml.scores", target);
        e.truncateArray("tokenizer.ggml.token_type", target);
        retype(e);
        eosIds(e);
        e.inject(ADD_SPACE_PREFIX, GgufValueType.BOOL, false);
        return e.build(name(), face());
    }

    /** Byte tokens typed BYTE, {@code <unused...>} tokens NORMAL, when the types are an INT32 array. */
    private static void retype(HeaderEdit e) {
        GgufKv types = e.kv("tokenizer.ggml.token_type");
        GgufKv toks = e.kv("tokenizer.ggml.tokens");
        if (types == null || toks == null || !(types.value() instanceof GgufArray ta) || ta.elementType() != GgufValueType.INT32
                || !(toks.value() instanceof GgufArray ka) || ka.elementType() != GgufValueType.STRING) {
            return;
        }
        List<Object> out = new ArrayList<>(ta.values());
        for (int i = 0; i < out.size() && i < ka.size(); i++) {
            String t = (String) ka.values().get(i);
            if (t.length() == 6 && t.startsWith("<0x") && t.charAt(5) == '>') {
                out.set(i, TYPE_BYTE);
            } else if (t.startsWith("<unused")) {
                out.set(i, TYPE_NORMAL);
            }
        }
        e.set("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, out));
    }

    /** End-of-turn among the end-of-generation ids. */
    private static void eosIds(HeaderEdit e) {
        String key = "tokenizer.ggml.eos_token_ids";
        GgufKv kv = e.kv(key);
        if (kv == null || kv.type() != GgufValueType.ARRAY) {
            e.set(key, GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(1, END_OF_TURN)));
            return;
        }
        GgufArray a = (GgufArray) kv.value();
        if ((a.elementType() == GgufValueType.INT32 || a.elementType() == GgufValueType.UINT32) && !a.values().contains(END_OF_TURN)) {
            List<Object> ids = new ArrayList<>(a.values());
            ids.add(END_OF_TURN);
            e.set(key, GgufValueType.ARRAY, new GgufArray(a.elementType(), ids));
        }
    }
}
