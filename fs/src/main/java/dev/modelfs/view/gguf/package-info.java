/**
 * GGUF models: model.safetensors, the dequantized variants and, for a supported architecture, the Hugging Face
 * folder (GgufModelView, GgufHfFiles).
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code hf}, {@code model}, {@code quant}, {@code store}, {@code synth}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.view.gguf;
