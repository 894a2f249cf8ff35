/**
 * The sink the read path and the front ends report to, with a no-op default and a gate that opens after the warm-
 * up (docs/DESIGN.md §2.13).
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.telemetry;
