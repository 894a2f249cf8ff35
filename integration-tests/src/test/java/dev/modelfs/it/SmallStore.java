package dev.modelfs.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A store written by the test itself: library models whose one {@code model} layer is a blob the test
 * makes (seeded random bytes, which are not a valid GGUF, so that model has no converted files; or a GGUF
 * the test writes), served byte for byte as {@code model.gguf}. The blob on disk is the oracle.
 */
final class SmallStore {
    private SmallStore() {}

    /** Writes model {@code name} with a {@code size}-byte blob made from {@code seed}; returns the blob's path. */
    static Path addModel(Path store, String name, int size, long seed) throws IOException {
        byte[] blob = new byte[size];
        new Random(seed).nextBytes(blob);
        return addModel(store, name, blob);
    }

    /** Writes model {@code name} whose {@code model} layer is {@code blob}; returns the blob's path. */
    static Path addModel(Path store, String name, byte[] blob) throws IOException {
        int size = blob.length;
        String digest = write(store, blob);
        writeManifest(store, name, "{\"model_format\":\"gguf\"}",
                List.of(Map.of("mediaType", "application/vnd.ollama.image.model", "digest", digest, "size", size)));
        return blobPath(store, digest);
    }

    /**
     * Writes model {@code name} as Ollama's safetensors importer lays it out: one tensor layer per blob of
     * {@code blobs} (each a whole safetensors file), named by {@code layerNames}; returns the blobs' paths.
     */
    static List<Path> addTensorModel(Path store, String name, List<byte[]> blobs, List<String> layerNames) throws IOException {
        List<Map<String, Object>> layers = new java.util.ArrayList<>();
        List<Path> paths = new java.util.ArrayList<>();
        for (int i = 0; i < blobs.size(); i++) {
            String digest = write(store, blobs.get(i));
            layers.add(Map.of("mediaType", "application/vnd.ollama.image.tensor", "digest", digest, "size", blobs.get(i).length,
                    "name", layerNames.get(i)));
            paths.add(blobPath(store, digest));
        }
        writeManifest(store, name, "{\"model_format\":\"safetensors\",\"file_type\":\"f16\"}", layers);
        return paths;
    }

    /** Writes the config blob {@code config} and the manifest of model {@code name} listing {@code layers}. */
    private static void writeManifest(Path store, String name, String config, List<?> layers) throws IOException {
        byte[] c = config.getBytes();
        String configDigest = write(store, c);
        Path manifest = store.resolve("manifests/registry.ollama.ai/library").resolve(name).resolve("latest");
        Files.createDirectories(manifest.getParent());
        new ObjectMapper().writeValue(manifest.toFile(), Map.of("schemaVersion", 2,
                "mediaType", "application/vnd.docker.distribution.manifest.v2+json",
                "config", Map.of("mediaType", "application/vnd.docker.container.image.v1+json", "digest", configDigest,
                        "size", c.length),
                "layers", layers));
    }

    private static String write(Path store, byte[] bytes) throws IOException {
        String digest;
        try {
            digest = "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        Files.createDirectories(store.resolve("blobs"));
        Files.write(blobPath(store, digest), bytes);
        return digest;
    }

    private static Path blobPath(Path store, String digest) {
        return store.resolve("blobs").resolve(digest.replace(':', '-'));
    }
}
