package dev.modelfs.telemetry;

import java.util.Locale;

/**
 * What a file's bytes are, for the bytes-served figures (README "Metrics").
 *
 * <p>Invariant: every file of the tree has exactly one kind, a pure function of its segments
 * ({@code view.ByteSource}): converted bytes make it {@link #CONVERTED}; else one whole blob is
 * {@link #PASSTHROUGH}; else any blob range is {@link #REASSEMBLED}; else (bytes modelfs wrote, zeros)
 * {@link #SYNTHESIZED}.
 */
public enum FileKind {
    /** One blob, byte for byte (the original GGUF, tensor blobs, JSON layers). */
    PASSTHROUGH,
    /** Blob ranges laid out with headers modelfs wrote, nothing computed (as-stored safetensors). */
    REASSEMBLED,
    /** At least one tensor computed: dequantized, cast or re-packed (variants, synthesized GGUF). */
    CONVERTED,
    /** Every byte written by modelfs (rebuilt JSON, Modelfile, manifest.json). */
    SYNTHESIZED;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The lower-case name used as a metric label value. */
    public String label() {
        return label;
    }
}
