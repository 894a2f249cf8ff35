package dev.modelfs.dialect;

/**
 * The two loaders a dialect blob is translated for (docs/FORMATS.md §12.1): llama.cpp's text loader
 * ({@code model.gguf}) and its clip loader in {@code tools/mtmd} ({@code mmproj.gguf}).
 */
public enum Face {
    /** The text model, served as {@code model.gguf}. */
    TEXT,
    /** The vision (or audio) tower and projector, served as {@code mmproj.gguf}. */
    CLIP
}
