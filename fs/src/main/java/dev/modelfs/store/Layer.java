package dev.modelfs.store;

import java.util.Optional;

/**
 * One manifest layer (or the manifest's config).
 *
 * <p>Invariants: {@code digest} is empty only when the manifest had no usable digest (then the
 * layer has no blob); {@code size >= 0}; {@code name} is the layer's {@code name} field or, for a
 * tensor layer without one, the {@code name=} media-type parameter; it is null when neither exists.
 */
public record Layer(MediaType mediaType, Optional<Digest> digest, long size, String from, String name) {

    public MediaType.Kind kind() {
        return mediaType.kind();
    }
}
