package dev.modelfs.tree;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;

/**
 * Everything a model directory is built from: the parsed manifest, its config blob, the store it
 * lives in and the manifest file's mtime. Pure data; building reads blob headers through {@link #store()}.
 */
public record ModelContext(OllamaStore store, Manifest manifest, ModelConfig config, long mtimeNanos) {

    /** Inode of a synthesized path inside this model. */
    public long inodeOf(String path) {
        return Inodes.of(manifest.digest().hex() + ":" + path);
    }
}
