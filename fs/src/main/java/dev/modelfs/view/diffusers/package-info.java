/**
 * Image models: the tokenizer folder's vocab.json and merges.txt rebuilt from tokenizer.json.
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code hf}, {@code model}, {@code quant}, {@code store}, {@code synth}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.view.diffusers;
