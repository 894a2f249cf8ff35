package dev.modelfs.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.format.FormatException;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Parses manifest JSON leniently where Ollama is lenient (unknown fields, media-type parameters,
 * extra formatting) and strictly where safety needs it (digests must be well-formed before they
 * can name a blob; sizes must be non-negative integers).
 */
public final class ManifestParser {
    /** Manifests are small; anything larger is not a manifest. */
    public static final int MAX_MANIFEST_BYTES = 16 << 20;

    private static final ObjectMapper JSON = new ObjectMapper();

    private ManifestParser() {}

    public static Manifest parse(ModelName name, byte[] raw) {
        if (raw.length > MAX_MANIFEST_BYTES) {
            throw new FormatException("manifest larger than " + MAX_MANIFEST_BYTES + " bytes");
        }
        JsonNode root;
        try {
            root = JSON.readTree(raw);
        } catch (IOException e) {
            throw new FormatException("manifest is not valid JSON: " + firstLine(e.getMessage()));
        }
        if (root == null || !root.isObject()) {
            throw new FormatException("manifest is not a JSON object");
        }
        JsonNode layersNode = root.get("layers");
        if (layersNode != null && !layersNode.isNull() && !layersNode.isArray()) {
            throw new FormatException("manifest 'layers' is not an array");
        }
        List<Layer> layers = new ArrayList<>();
        if (layersNode != null && layersNode.isArray()) {
            int i = 0;
            for (JsonNode l : layersNode) {
                layers.add(layer(l, "layers[" + i++ + "]"));
            }
        }
        JsonNode configNode = root.get("config");
        Layer config = configNode == null || configNode.isNull()
                ? new Layer(MediaType.parse(MediaType.Kind.CONFIG.type), Optional.empty(), 0, null, null)
                : layer(configNode, "config");
        return new Manifest(name, raw, sha256(raw), root.path("schemaVersion").asInt(0),
                root.path("mediaType").asText(""), config, layers);
    }

    private static Layer layer(JsonNode l, String where) {
        if (!l.isObject()) {
            throw new FormatException(where + " is not an object");
        }
        MediaType mt = MediaType.parse(l.path("mediaType").asText(""));
        String digestText = l.path("digest").asText("");
        Optional<Digest> digest = Digest.parse(digestText);
        if (digest.isEmpty() && !digestText.isEmpty()) {
            throw new FormatException(where + " has a malformed digest");
        }
        JsonNode sizeNode = l.get("size");
        long size = 0;
        if (sizeNode != null && !sizeNode.isNull()) {
            if (!sizeNode.canConvertToExactIntegral() || !sizeNode.canConvertToLong() || sizeNode.asLong() < 0) {
                throw new FormatException(where + " has an invalid size");
            }
            size = sizeNode.asLong();
        }
        String name = textOrNull(l.get("name"));
        if (name == null && mt.kind() == MediaType.Kind.TENSOR) {
            name = mt.params().get("name");
        }
        return new Layer(mt, digest, size, textOrNull(l.get("from")), name);
    }

    private static String textOrNull(JsonNode n) {
        return n == null || !n.isTextual() || n.asText().isEmpty() ? null : n.asText();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    static Digest sha256(byte[] raw) {
        try {
            return new Digest(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
