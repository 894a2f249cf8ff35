/**
 * The warm-up of a fresh mount or NFS server, run behind the tree it already serves ({@code BackgroundWarmup}): the
 * conversion kernels the store uses, its read path, then a wait for the JIT (docs/DESIGN.md §2.8).
 *
 * <p>May import: {@code bytes}, {@code cache}, {@code read}, {@code store}, {@code tree} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.warmup;
