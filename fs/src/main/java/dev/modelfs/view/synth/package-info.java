/**
 * safetensors LLMs: the synthesized model.gguf and its variants (SynthesizedGgufView).
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code hf}, {@code model}, {@code quant}, {@code store}, {@code synth}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.view.synth;
