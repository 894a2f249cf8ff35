package dev.modelfs.store;

import java.nio.file.Path;

/**
 * A manifest file found in the store, identified cheaply by its stat data.
 *
 * <p>Invariant: two refs with equal fields denote (for practical purposes) the same file contents;
 * a rewritten manifest changes {@code mtimeNanos} or {@code size}.
 */
public record ManifestRef(ModelName name, Path file, long mtimeNanos, long size, Object fileKey) {}
