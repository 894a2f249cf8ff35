package dev.modelfs.model;

import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How readable a model's files may be on the mount: never more than the files they are built from
 * (docs/SEMANTICS.md "Permissions and ownership"). A model's files are built from its manifest and its
 * blobs (passthrough files from one blob, rebuilt and converted files from headers and data of
 * several, the Modelfile from text layers), so each gets the read bits that every one of them grants,
 * class by class (owner, group, other), as the target of any symbolic link is seen ({@code stat}).
 *
 * <p>Invariants: the result is a subset of {@code 0444}; a source that does not exist (or cannot be
 * examined) is left out: a missing blob fails at open anyway. Computed when the model directory is
 * built; a later {@code chmod} of a source shows at the next change of the manifest.
 */
public final class SourceModes {
    /** Files are never more than read-only. */
    public static final int READ_ONLY = 0444;

    private SourceModes() {}

    /** The read bits of the model's files: {@link #READ_ONLY} narrowed by the manifest and every blob it names. */
    public static int ofModel(OllamaStore store, Manifest m) {
        List<Path> sources = new ArrayList<>();
        sources.add(store.manifestsDir().resolve(m.name().manifestPath()));
        m.config().digest().flatMap(store::blobPath).ifPresent(sources::add);
        for (Layer l : m.layers()) {
            l.digest().flatMap(store::blobPath).ifPresent(sources::add);
        }
        int mode = READ_ONLY;
        for (Path p : sources) {
            mode &= readBits(p).orElse(READ_ONLY);
        }
        return mode;
    }

    private static Optional<Integer> readBits(Path p) {
        try {
            return Optional.of(((Number) Files.getAttribute(p, "unix:mode")).intValue() & READ_ONLY);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
