package dev.modelfs.store;

import java.util.Locale;
import java.util.Optional;

/**
 * A fully qualified Ollama model name: host, namespace, model, tag (docs/FORMATS.md §1.4).
 *
 * <p>Invariants: every part is valid per {@link #isValidPart}; instances only come from
 * {@link #parse} (defaults filled in) or {@link #fromParts} (manifest path components), both of
 * which reject invalid input, so a {@code ModelName} is always safe to use as path components.
 */
public record ModelName(String host, String namespace, String model, String tag) {
    public static final String DEFAULT_HOST = "registry.ollama.ai";
    public static final String DEFAULT_NAMESPACE = "library";
    public static final String DEFAULT_TAG = "latest";

    private static final String MISSING = "!MISSING!";

    public ModelName {
        if (!isValidPart(PartKind.HOST, host) || !isValidPart(PartKind.NAMESPACE, namespace)
                || !isValidPart(PartKind.MODEL, model) || !isValidPart(PartKind.TAG, tag)) {
            throw new IllegalArgumentException("invalid model name " + host + "/" + namespace + "/" + model + ":" + tag);
        }
    }

    /** Which part of a name a string is, for validation. */
    public enum PartKind { HOST, NAMESPACE, MODEL, TAG }

    /** Parses user input like Ollama's {@code ParseName}; empty if the result is not a valid name. */
    public static Optional<ModelName> parse(String s) {
        String host = null, namespace = null, model, tag = null;
        String rest = s;
        int colon = rest.lastIndexOf(':');
        int slash = rest.lastIndexOf('/');
        if (colon >= 0 && colon > slash) {
            tag = rest.substring(colon + 1);
            rest = rest.substring(0, colon);
            if (tag.isEmpty()) {
                tag = MISSING;
            }
        }
        slash = rest.lastIndexOf('/');
        if (slash < 0) {
            model = rest;
        } else {
            model = emptyToMissing(rest.substring(slash + 1));
            rest = rest.substring(0, slash);
            slash = rest.lastIndexOf('/');
            if (slash < 0) {
                namespace = emptyToMissing(rest);
            } else {
                namespace = emptyToMissing(rest.substring(slash + 1));
                host = rest.substring(0, slash);
                int scheme = host.indexOf("://");
                if (scheme >= 0) {
                    host = host.substring(scheme + 3);
                }
                host = emptyToMissing(host);
            }
        }
        return fromParts(host == null ? DEFAULT_HOST : host, namespace == null ? DEFAULT_NAMESPACE : namespace,
                model, tag == null ? DEFAULT_TAG : tag);
    }

    private static String emptyToMissing(String s) {
        return s.isEmpty() ? MISSING : s;
    }

    /** A name from its four parts (e.g. manifest path components); empty if any part is invalid. */
    public static Optional<ModelName> fromParts(String host, String namespace, String model, String tag) {
        if (isValidPart(PartKind.HOST, host) && isValidPart(PartKind.NAMESPACE, namespace)
                && isValidPart(PartKind.MODEL, model) && isValidPart(PartKind.TAG, tag)) {
            return Optional.of(new ModelName(host, namespace, model, tag));
        }
        return Optional.empty();
    }

    /** Ollama's {@code isValidPart}: length limits and character classes per part. */
    public static boolean isValidPart(PartKind kind, String s) {
        if (s == null || s.isEmpty()) {
            return false;
        }
        int max = kind == PartKind.HOST ? 350 : 80;
        if (s.length() > max) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
            if (alnum) {
                continue;
            }
            if (i == 0) {
                return false;
            }
            if (c == '-') {
                continue;
            }
            if (c == '.' && kind != PartKind.NAMESPACE) {
                continue;
            }
            if (c == ':' && kind == PartKind.HOST) {
                continue;
            }
            return false;
        }
        return true;
    }

    /** Manifest path below {@code manifests/}: {@code host/namespace/model/tag}. */
    public String manifestPath() {
        return host + "/" + namespace + "/" + model + "/" + tag;
    }

    /** Ollama's {@code DisplayShortest}: the name as {@code ollama list} shows it, tag always included. */
    public String displayShortest() {
        if (!host.equalsIgnoreCase(DEFAULT_HOST)) {
            return host + "/" + namespace + "/" + model + ":" + tag;
        }
        if (!namespace.equalsIgnoreCase(DEFAULT_NAMESPACE)) {
            return namespace + "/" + model + ":" + tag;
        }
        return model + ":" + tag;
    }

    /** The model's directory below the mount root: like {@link #displayShortest} with {@code :latest} dropped. */
    public String directoryPath() {
        String shortest = displayShortest();
        String suffix = ":" + tag;
        return tag.equals(DEFAULT_TAG) ? shortest.substring(0, shortest.length() - suffix.length()) : shortest;
    }

    /** Case-insensitive comparison, as Ollama compares names. */
    public boolean equalsIgnoreCase(ModelName o) {
        return manifestPath().toLowerCase(Locale.ROOT).equals(o.manifestPath().toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
        return displayShortest();
    }
}
