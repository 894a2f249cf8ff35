package dev.modelfs.store;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A layer media type split into base and parameters ({@code base; k=v; ...}, docs/FORMATS.md §2.3).
 *
 * <p>Invariants: {@code base} is trimmed and lower-cased; {@code kind} is derived from {@code base}
 * alone; {@code params} keys are trimmed, values are trimmed, insertion-ordered and unmodifiable.
 */
public record MediaType(String base, Kind kind, Map<String, String> params) {

    /** What a layer's blob is. */
    public enum Kind {
        MODEL("application/vnd.ollama.image.model"),
        PROJECTOR("application/vnd.ollama.image.projector"),
        ADAPTER("application/vnd.ollama.image.adapter"),
        DRAFT("application/vnd.ollama.image.draft"),
        TEMPLATE("application/vnd.ollama.image.template"),
        PROMPT("application/vnd.ollama.image.prompt"),
        SYSTEM("application/vnd.ollama.image.system"),
        PARAMS("application/vnd.ollama.image.params"),
        MESSAGES("application/vnd.ollama.image.messages"),
        LICENSE("application/vnd.ollama.image.license"),
        EMBED("application/vnd.ollama.image.embed"),
        TENSOR("application/vnd.ollama.image.tensor"),
        JSON("application/vnd.ollama.image.json"),
        CONFIG("application/vnd.docker.container.image.v1+json"),
        UNKNOWN("");

        final String type;

        Kind(String type) {
            this.type = type;
        }
    }

    public MediaType {
        params = Map.copyOf(params);
    }

    public static MediaType parse(String raw) {
        String s = raw == null ? "" : raw;
        String[] parts = s.split(";");
        String base = parts[0].trim().toLowerCase(Locale.ROOT);
        Map<String, String> params = new LinkedHashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            int eq = p.indexOf('=');
            if (eq > 0) {
                params.putIfAbsent(p.substring(0, eq).trim(), p.substring(eq + 1).trim());
            }
        }
        Kind kind = Kind.UNKNOWN;
        for (Kind k : Kind.values()) {
            if (k != Kind.UNKNOWN && k.type.equals(base)) {
                kind = k;
            }
        }
        return new MediaType(base, kind, params);
    }
}
