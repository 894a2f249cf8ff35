/**
 * A manifest's tensor layers and headers read into ModelTables (every Ollama blob layout, docs/FORMATS.md §4), and
 * the quantization each tensor carries.
 *
 * <p>May import: {@code cache}, {@code format}, {@code quant}, {@code store} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.model;
