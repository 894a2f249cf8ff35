/**
 * The Hugging Face <-> GGUF mapping of LLM architectures, one class per architecture behind the sealed ArchSpec
 * (names, shapes, norm shift, q/k permutation, config.json <-> GGUF keys, rope, refusals); the tokenizer tables.
 * No code outside this package branches on an architecture (docs/DESIGN.md §2.2, docs/FORMATS.md §7.3-§7.4).
 *
 * <p>May import: {@code format} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.arch;
