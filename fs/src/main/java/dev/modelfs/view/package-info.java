/**
 * The families of files a model directory shows, one subpackage each; view itself completes the variant folders
 * fp32/, fp16/, bf16/ (docs/DESIGN.md §1).
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code hf}, {@code model}, {@code quant}, {@code store}, {@code synth}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.view;
