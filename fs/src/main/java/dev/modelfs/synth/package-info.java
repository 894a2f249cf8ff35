/**
 * The synthesized GGUF of a safetensors LLM planned as data: names, types and KVs from the arch tables
 * (docs/FORMATS.md §7.5).
 *
 * <p>May import: {@code arch}, {@code format}, {@code model}, {@code quant} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.synth;
