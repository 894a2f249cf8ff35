package dev.modelfs.arch;

import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * What llama.cpp's converter adds to the tokenizer metadata of every Gemma (1, 2, 3): Gemma's SentencePiece
 * model has no dummy prefix, so a SentencePiece-style vocabulary ({@code tokenizer.ggml.model = llama}) gets
 * {@code tokenizer.ggml.add_space_prefix = false} (llama.cpp's default, true, would put a {@code ▁} token before
 * every prompt). A byte-level vocabulary gets nothing (the converter's Gemma 3 reads one as GPT-2 BPE).
 * docs/FORMATS.md §7.5.
 */
final class GemmaVocab {
    private GemmaVocab() {
    }

    /** The Gemma tokenizer KVs for a vocabulary of this model. */
    static List<GgufKv> extras(TokenizerTables.TokenizerModel model) {
        if (model != TokenizerTables.TokenizerModel.LLAMA) {
            return List.of();
        }
        return List.of(new GgufKv(TokenizerTables.ADD_SPACE_PREFIX, GgufValueType.BOOL, false, 0, 0));
    }
}
