package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * Gemma 3 as Ollama's converter writes it ({@code convert/convert_gemma3.go}), for llama.cpp's text loader:
 * Ollama's {@code detect_ollama_gemma3} and {@code handle_gemma3} (docs/FORMATS.md §12.2). Metadata only:
 * nested rope keys copied to the flat names, the keys Ollama omits injected with Gemma 3's defaults, the
 * tokenizer arrays cut to the embedding's rows, the vision tower and projector ({@code v.*}, {@code mm.*})
 * left out; every kept tensor is the blob's bytes (the RMS-norm +1 is already in the blob). Beyond Ollama's handler,
 * {@code tokenizer.ggml.add_space_prefix = false} injected for a SentencePiece vocabulary ({@link #spaceprefix}).
 */
public record Gemma3Text() implements DialectHandler {
    private static final String ARCH = "gemma3";

    /** {@code kGemma3ChatTemplate}: Gemma 3's chat template, which Ollama's files do not carry. */
    static final String CHAT_TEMPLATE = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
            + "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
            + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
            + "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
            + "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
            + "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}";

    @Override
    public String name() {
        return "gemma3";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /**
     * {@code detect_ollama_gemma3}: architecture {@code gemma3} and at least one converter quirk. A file with
     * {@code dense.0.weight} is embeddinggemma, whose handler runs first in Ollama's dispatch and renames the
     * architecture, so this one never sees it.
     */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH) && g.tensor("dense.0.weight") == null && quirks(g);
    }

    /** The converter quirks of {@code detect_ollama_gemma3}, shared with the clip face. */
    static boolean quirks(GgufFile g) {
        return Markers.has(g, "gemma3.mm.tokens_per_image") || Markers.anyTensorWithPrefix(g, "v.")
                || Markers.anyTensorWithPrefix(g, "mm.") || Markers.has(g, "gemma3.rope.global.freq_base")
                || Markers.has(g, "gemma3.rope.local.freq_base") || Markers.has(g, "tokenizer.ggml.add_padding_token")
                || Markers.has(g, "tokenizer.ggml.add_unknown_token") || !Markers.has(g, "gemma3.attention.layer_norm_rms_epsilon");
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.copy("gemma3.rope.global.freq_base", "gemma3.rope.freq_base", GgufValueType.FLOAT32);
        e.copy("gemma3.rope.local.freq_base", "gemma3.rope.freq_base_swa", GgufValueType.FLOAT32);
        e.inject("gemma3.attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-6f);
        e.inject("gemma3.rope.freq_base", GgufValueType.FLOAT32, 1_000_000f);
        e.inject("gemma3.rope.freq_base_swa", GgufValueType.FLOAT32, 10_000f);
        e.inject("tokenizer.chat_template", GgufValueType.STRING, CHAT_TEMPLATE);
        GgufKv context = g.kv("gemma3.context_length");
        if (context != null) {
            if (context.type() != GgufValueType.UINT32) {
                throw new FormatException("gemma3.context_length is " + context.type() + ", not UINT32");
            }
            if (Integer.toUnsignedLong((Integer) context.value()) >= 131072) {   // 4B and up: linear rope scaling 8
                e.inject("gemma3.rope.scaling.type", GgufValueType.STRING, "linear");
                e.inject("gemma3.rope.scaling.factor", GgufValueType.FLOAT32, 8.0f);
            }
        }
        GgufTensorInfo embd = g.tensor("token_embd.weight");
        if (embd == null || embd.rank() != 2) {
            throw new FormatException("token_embd.weight is " + (embd == null ? "missing" : "of rank " + embd.rank()));
        }
        long rows = embd.ne()[1];
        long tokens = arrayLength(g, "tokenizer.ggml.tokens");
        if (tokens < 0) {
            throw new FormatException("tokenizer.ggml.tokens is missing for " + rows + " embedding rows");
        }
        if (tokens < rows) {
            throw new FormatException("tokenizer.ggml.tokens has " + tokens + " entries for " + rows + " embedding rows");
        }
        for (String companion : new String[] {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
            if (g.kv(companion) != null && arrayLength(g, companion) != tokens) {
                throw new FormatException(companion + " has " + arrayLength(g, companion) + " entries for " + tokens + " tokens");
            }
        }
        e.truncateArray("tokenizer.ggml.tokens", rows);
        e.truncateArray("tokenizer.ggml.scores", rows);
        e.truncateArray("tokenizer.ggml.token_type", rows);
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        spaceprefix(g, e);
        return e.build(name(), face());
    }

    /**
     * Not in Ollama's {@code handle_gemma3}: a Gemma 3 checkpoint ships {@code tokenizer.model}, which Ollama's converter
     * writes as a SentencePiece vocabulary ({@code tokenizer.ggml.model = llama}) without
     * {@code tokenizer.ggml.add_space_prefix}; llama.cpp's SentencePiece vocabulary then prepends a space to every text,
     * which Gemma's tokenizer (no dummy prefix) does not. Injected false when absent, as llama.cpp's converter writes it
     * ({@code Gemma3Model.set_vocab}; the gemma3-spm dialect fixture), and as for {@link Gemma3n}. A BPE vocabulary
     * ({@code gpt2}) is left alone: llama.cpp adds no prefix there and its converter writes no key.
     */
    private static void spaceprefix(GgufFile g, HeaderEdit e) {
        if (Markers.stringEquals(g, "tokenizer.ggml.model", "llama")) {
            e.inject(Gemma3n.ADD_SPACE_PREFIX, GgufValueType.BOOL, false);
        }
    }

    /** Elements of an array KV; -1 when absent. */
    static long arrayLength(GgufFile g, String key) {
        GgufKv kv = g.kv(key);
        if (kv == null) {
            return -1;
        }
        if (!(kv.value() instanceof GgufArray a)) {
            throw new FormatException(key + " is " + kv.type() + ", not an array");
        }
        return a.size();
    }
}
