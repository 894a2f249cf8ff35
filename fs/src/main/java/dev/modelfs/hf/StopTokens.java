package dev.modelfs.hf;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code eos_token_id} list of a folder's {@code generation_config.json} for an architecture with several stop tokens
 * ({@link dev.modelfs.arch.ArchSpec#hfStopTokens}): each text looked up in the vocabulary (its first token of that text),
 * in the architecture's order, those the vocabulary lacks skipped, then the GGUF's own eos when not among them.
 *
 * {@code config.json}'s single {@code eos_token_id} is the list's first ({@link #eos}: gpt-oss's {@code <|return|>}, as its
 * published config says, where Ollama's GGUF has {@code <|endoftext|>}).
 *
 * <p>Invariants: the ids are distinct tokens of the vocabulary; the list is written only when it has more than one id
 * (else {@code eos_token_id} stays the single {@link #eos}); for an architecture without stop texts {@link #eos} is the
 * GGUF's eos, as it is.
 */
final class StopTokens {
    private StopTokens() {
    }

    /** The stop ids of {@code texts} in {@code vocab}, then its eos. */
    static List<Integer> of(GgufVocab vocab, List<String> texts) {
        List<Integer> ids = new ArrayList<>();
        for (String t : texts) {
            int id = vocab.tokens().indexOf(t);
            if (id >= 0 && !ids.contains(id)) {
                ids.add(id);
            }
        }
        if (vocab.eos() != null && !ids.contains(vocab.eos())) {
            ids.add(vocab.eos());
        }
        return ids;
    }

    /** The single eos of {@code config.json}: the first of {@link #of} for an architecture with stop texts, else the GGUF's eos (or null). */
    static Integer eos(GgufVocab vocab, List<String> texts) {
        List<Integer> ids = texts.isEmpty() ? List.of() : of(vocab, texts);
        return ids.isEmpty() ? vocab.eos() : ids.getFirst();
    }

    /** Sets {@code gen}'s {@code eos_token_id} to the list of {@link #of} when it has more than one id. */
    static void put(ObjectNode gen, GgufVocab vocab, List<String> texts) {
        List<Integer> ids = texts.isEmpty() ? List.of() : of(vocab, texts);
        if (ids.size() > 1) {
            ArrayNode a = gen.putArray("eos_token_id");
            ids.forEach(a::add);
        }
    }
}
