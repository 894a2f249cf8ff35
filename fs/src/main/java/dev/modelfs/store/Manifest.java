package dev.modelfs.store;

import java.util.List;

/**
 * A parsed manifest file (docs/FORMATS.md §2) together with the exact bytes it was parsed from.
 *
 * <p>Invariants: {@code digest} is the SHA-256 of {@code raw}; {@code layers} is unmodifiable and in
 * file order; {@code config} may have an empty digest.
 */
public record Manifest(ModelName name, byte[] raw, Digest digest, int schemaVersion, String mediaType,
                       Layer config, List<Layer> layers) {
    public Manifest {
        layers = List.copyOf(layers);
    }

    /** Layers of one kind, in manifest order. */
    public List<Layer> layers(MediaType.Kind kind) {
        return layers.stream().filter(l -> l.kind() == kind).toList();
    }

    /** The first layer of a kind, or null. */
    public Layer first(MediaType.Kind kind) {
        for (Layer l : layers) {
            if (l.kind() == kind) {
                return l;
            }
        }
        return null;
    }

    /** Sum of layer and config sizes, as {@code ollama list} reports a model's size. */
    public long totalSize() {
        long total = config.size();
        for (Layer l : layers) {
            total += l.size();
        }
        return total;
    }
}
