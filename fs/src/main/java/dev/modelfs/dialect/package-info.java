/**
 * Ollama's own GGUF dialect translated on the fly (docs/FORMATS.md §12): detection by the markers Ollama's compat layer
 * uses, one handler per dialect behind a sealed interface, and the translated header and tensor plan of
 * {@code model.gguf} and {@code mmproj.gguf} as data (kept tensors sliced from the blob, computed ones converted).
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code convert}, {@code format}, {@code quant} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.dialect;
