package dev.modelfs.cli;

import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.hf.GgufVocab;
import dev.modelfs.hf.TokenizerFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The vocabulary of the demo models: a GPT-2-style byte-level BPE, small but complete, so that the
 * Hugging Face tokenizer of the GGUF model and the GGUF tokenizer of the safetensors model can be
 * rebuilt from it.
 *
 * <p>Invariants: ids 0–255 are the 256 byte tokens in GPT-2's byte-to-unicode order (so every text
 * can be tokenized); then one token per merge, in merge order (each merge joins two earlier tokens);
 * then the special tokens, of type CONTROL ({@code <|begin|>} is BOS, {@code <|end|>} is EOS). Token
 * strings are unique. Immutable.
 */
final class DemoVocab {
    /** Merges of common pieces of the demo's sample sentences ("Hello world", "the modelfs demo"). */
    private static final List<String> MERGES = List.of(
            "Ġ t", "h e", "Ġt he", "Ġ a", "i n", "e r", "o r", "l l", "e ll", "H ell", "Hell o",
            "Ġ w", "Ġw or", "l d", "Ġwor ld", "Ġ m", "o d", "Ġm od", "e l", "Ġmod el", "f s", "Ġmodel fs",
            "Ġ d", "e m", "Ġd em", "Ġdem o");
    private static final List<String> SPECIALS = List.of("<|begin|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>");
    static final String BOS = "<|begin|>", EOS = "<|end|>";
    /** The chat template (Jinja, as {@code tokenizer.chat_template} / {@code tokenizer_config.json} carry it). */
    static final String CHAT_TEMPLATE = "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>"
            + "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
    /** The same conversation format as an Ollama (Go) template. */
    static final String OLLAMA_TEMPLATE = "{{ if .System }}<|system|>{{ .System }}<|end|>{{ end }}"
            + "<|user|>{{ .Prompt }}<|end|><|assistant|>";

    private final List<String> tokens;
    private final int[] types;

    DemoVocab() {
        List<String> t = new ArrayList<>(byteTokens());
        Set<String> known = new HashSet<>(t);
        for (String m : MERGES) {
            String[] parts = m.split(" ");
            if (!known.contains(parts[0]) || !known.contains(parts[1])) {
                throw new IllegalStateException("merge " + m + " joins an unknown token");
            }
            t.add(parts[0] + parts[1]);
            known.add(parts[0] + parts[1]);
        }
        t.addAll(SPECIALS);
        tokens = List.copyOf(t);
        types = new int[tokens.size()];
        Arrays.fill(types, GgufVocab.NORMAL);
        Arrays.fill(types, tokens.size() - SPECIALS.size(), tokens.size(), GgufVocab.CONTROL);
    }

    int size() {
        return tokens.size();
    }

    int id(String token) {
        return tokens.indexOf(token);
    }

    /** The {@code tokenizer.*} KVs of a GGUF, encoded. */
    List<byte[]> ggufKvs() {
        List<Object> typeList = new ArrayList<>();
        for (int ty : types) {
            typeList.add(ty);
        }
        return List.of(
                GgufWriter.encodeKv("tokenizer.ggml.model", GgufValueType.STRING, "gpt2"),
                GgufWriter.encodeKv("tokenizer.ggml.pre", GgufValueType.STRING, "gpt-2"),
                GgufWriter.encodeKv("tokenizer.ggml.tokens", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.copyOf(tokens))),
                GgufWriter.encodeKv("tokenizer.ggml.token_type", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, typeList)),
                GgufWriter.encodeKv("tokenizer.ggml.merges", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.copyOf(MERGES))),
                GgufWriter.encodeKv("tokenizer.ggml.bos_token_id", GgufValueType.UINT32, id(BOS)),
                GgufWriter.encodeKv("tokenizer.ggml.eos_token_id", GgufValueType.UINT32, id(EOS)),
                GgufWriter.encodeKv("tokenizer.ggml.add_bos_token", GgufValueType.BOOL, true),
                GgufWriter.encodeKv("tokenizer.ggml.add_eos_token", GgufValueType.BOOL, false),
                GgufWriter.encodeKv("tokenizer.chat_template", GgufValueType.STRING, CHAT_TEMPLATE));
    }

    /** {@code tokenizer.json} of a Hugging Face model with this vocabulary. */
    byte[] tokenizerJson() {
        return TokenizerFiles.tokenizerJson(asGgufVocab());
    }

    /** {@code tokenizer_config.json} for a model of context length {@code maxLength}. */
    byte[] tokenizerConfig(long maxLength) {
        return TokenizerFiles.tokenizerConfig(asGgufVocab(), maxLength);
    }

    private GgufVocab asGgufVocab() {
        return new GgufVocab("gpt2", "gpt-2", tokens, types, new float[tokens.size()], MERGES, id(BOS), id(EOS), null, null,
                true, false, false, CHAT_TEMPLATE);
    }

    /** GPT-2's {@code bytes_to_unicode}: printable bytes map to themselves, the others to U+0100 onwards. */
    private static List<String> byteTokens() {
        List<Integer> bs = new ArrayList<>();
        for (int b = '!'; b <= '~'; b++) {
            bs.add(b);
        }
        for (int b = 0xA1; b <= 0xAC; b++) {
            bs.add(b);
        }
        for (int b = 0xAE; b <= 0xFF; b++) {
            bs.add(b);
        }
        List<String> out = new ArrayList<>();
        bs.forEach(b -> out.add(Character.toString(b)));
        int n = 0;
        for (int b = 0; b < 256; b++) {
            if (!bs.contains(b)) {
                out.add(Character.toString(256 + n++));
            }
        }
        return out;
    }
}
