package dev.modelfs.hf;

/**
 * Why a GGUF model (or one of its Hugging Face files) cannot be shown as a Hugging Face folder: an
 * architecture, tokenizer or tensor the mapping does not know. The message is one log line, and
 * what {@code modelfs show} prints.
 */
public final class HfUnsupported extends RuntimeException {
    public HfUnsupported(String reason) {
        super(reason, null, false, false);
    }
}
