/**
 * The Prometheus side of the telemetry: the sink on the Prometheus Java client and its HTTP endpoint, the text-
 * format parser and the status screen (docs/DESIGN.md §2.13).
 *
 * <p>May import: {@code arch}, {@code bytes}, {@code cache}, {@code convert}, {@code dialect}, {@code format}, {@code fuse}, {@code hf}, {@code model}, {@code nfs}, {@code quant}, {@code read}, {@code serve}, {@code store}, {@code synth}, {@code telemetry}, {@code template}, {@code tree}, {@code warmup} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.cli.metrics;
