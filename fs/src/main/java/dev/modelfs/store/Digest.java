package dev.modelfs.store;

import java.util.Optional;

/**
 * A SHA-256 content digest as written in manifests ({@code sha256:<64 hex>}).
 *
 * <p>Invariant: {@link #hex()} is exactly 64 hex digits, so {@link #fileName()} can never name
 * anything outside {@code blobs/} (no separators, no dots).
 */
public record Digest(String hex) {
    public Digest {
        if (!isHex64(hex)) {
            throw new IllegalArgumentException("not a sha256 digest: " + hex);
        }
    }

    /** Accepts {@code sha256:<hex>} or {@code sha256-<hex>} (Ollama's {@code ^sha256[:-][0-9a-fA-F]{64}$}). */
    public static Optional<Digest> parse(String s) {
        if (s == null || s.length() != 71 || !s.startsWith("sha256") || (s.charAt(6) != ':' && s.charAt(6) != '-')) {
            return Optional.empty();
        }
        String hex = s.substring(7);
        return isHex64(hex) ? Optional.of(new Digest(hex)) : Optional.empty();
    }

    static boolean isHex64(String s) {
        if (s == null || s.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                return false;
            }
        }
        return true;
    }

    /** The blob file name, {@code sha256-<hex>}. */
    public String fileName() {
        return "sha256-" + hex;
    }

    /** The pre-{@code fixBlobs} file name, {@code sha256:<hex>}. */
    public String legacyFileName() {
        return "sha256:" + hex;
    }

    /** First 12 hex digits, as {@code ollama list} shows a model id. */
    public String shortId() {
        return hex.substring(0, 12);
    }

    @Override
    public String toString() {
        return "sha256:" + hex;
    }
}
