/**
 * GGUF models in Ollama's dialect: the translated {@code model.gguf} and {@code mmproj.gguf}, and the stored blob
 * under {@code ollama/} (docs/SEMANTICS.md "Ollama's GGUF dialect").
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code hf}, {@code model}, {@code quant}, {@code store}, {@code synth}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.view.dialect;
