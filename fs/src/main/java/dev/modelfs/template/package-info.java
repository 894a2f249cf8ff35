/**
 * Ollama chat templates (Go {@code text/template}) as Jinja chat templates for transformers (docs/FORMATS.md §7.9): a
 * parser of the subset Ollama's templates use, the data Ollama passes rebuilt from Hugging Face's {@code messages},
 * the translation or the reason there is none. Pure functions of a string.
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.template;
