package dev.modelfs.format;

/**
 * A file does not follow its format (safetensors, GGUF, manifest JSON ...). The message names what is
 * wrong in one line, fit for a log line; it never carries file contents beyond short identifiers.
 */
public class FormatException extends RuntimeException {
    public FormatException(String message) {
        super(message);
    }

    public FormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
