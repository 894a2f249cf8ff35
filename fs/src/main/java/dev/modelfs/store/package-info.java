/**
 * The Ollama store on disk, read only: manifests, model names, the config blob, blob paths (docs/FORMATS.md §1).
 *
 * <p>May import: {@code cache}, {@code format} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.store;
