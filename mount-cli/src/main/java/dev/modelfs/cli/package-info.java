/**
 * The modelfs command (picocli): mount and nfs through one ServeLifecycle, unmount, ls, show, verify, status,
 * demo.
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code fuse}, {@code hf}, {@code model}, {@code nfs}, {@code quant}, {@code read}, {@code serve}, {@code store}, {@code synth}, {@code telemetry}, {@code template}, {@code tree}, {@code warmup} (never {@code view}: the views only through {@code serve}) (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.cli;
