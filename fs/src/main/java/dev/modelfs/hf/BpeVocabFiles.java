package dev.modelfs.hf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The {@code vocab.json} and {@code merges.txt} of a BPE tokenizer, rebuilt from its {@code tokenizer.json}
 * (docs/FORMATS.md §4.4, SEMANTICS.md "Image models"): what transformers' slow GPT-2-style tokenizers
 * ({@code Qwen2Tokenizer}, {@code GPT2Tokenizer}, {@code CLIPTokenizer} …) read, and what Ollama's image
 * importer never stored ({@code merges.txt} is not JSON; {@code vocab.json} only when the source had it).
 *
 * <ul>
 *   <li>{@code vocab.json}: the object {@code model.vocab} (token → id) in stored order, compact, UTF-8
 *       (Python's {@code json.dumps(vocab, ensure_ascii=False)}, as the published Qwen folders hold it);</li>
 *   <li>{@code merges.txt}: {@code #version: 0.2}, then one merge per line in rank order, its two parts
 *       joined by one space (transformers' {@code save_vocabulary}); {@code model.merges} entries are
 *       {@code "a b"} strings (tokenizers before 0.20) or {@code ["a", "b"]} pairs.</li>
 * </ul>
 * Invariant: pure functions of the tokenizer.json bytes; anything but a BPE model with a vocab object
 * and a merges array is refused with an {@link HfUnsupported} saying why.
 */
public final class BpeVocabFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private BpeVocabFiles() {}

    /** {@code model} of a BPE tokenizer.json, checked. */
    public static JsonNode bpeModel(byte[] tokenizerJson) {
        JsonNode root;
        try {
            root = JSON.readTree(tokenizerJson);
        } catch (IOException e) {
            throw new HfUnsupported("tokenizer.json is not JSON: " + e.getMessage());
        }
        JsonNode model = root == null ? null : root.get("model");
        if (model == null || !"BPE".equals(model.path("type").asText()) || !model.path("vocab").isObject()
                || !model.path("merges").isArray()) {
            throw new HfUnsupported("tokenizer.json holds no BPE model with a vocab and merges");
        }
        return model;
    }

    public static byte[] vocabJson(JsonNode bpeModel) {
        try {
            return JSON.writeValueAsBytes(bpeModel.get("vocab"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static byte[] mergesTxt(JsonNode bpeModel) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("#version: 0.2\n".getBytes(StandardCharsets.UTF_8));
        for (JsonNode m : bpeModel.get("merges")) {
            String line;
            if (m.isTextual()) {
                line = m.asText();
            } else if (m.isArray() && m.size() == 2 && m.get(0).isTextual() && m.get(1).isTextual()) {
                line = m.get(0).asText() + " " + m.get(1).asText();
            } else {
                throw new HfUnsupported("tokenizer.json merge " + m + " is neither \"a b\" nor [a, b]");
            }
            if (line.indexOf('\n') >= 0) {
                throw new HfUnsupported("tokenizer.json merge with a line break cannot be written to merges.txt");
            }
            out.writeBytes((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }
}
