/**
 * The Hugging Face folder of a GGUF model built as data: config.json, tokenizer files and the tensor plan, from
 * the GGUF metadata through the arch mapping (docs/SEMANTICS.md "Hugging Face folder of GGUF models").
 *
 * <p>May import: {@code arch}, {@code format}, {@code template} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.hf;
