/**
 * Byte formats independent of Ollama, pure functions over segments and arrays: safetensors and GGUF headers, the
 * ggml type table (docs/FORMATS.md §2-§3).
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.format;
