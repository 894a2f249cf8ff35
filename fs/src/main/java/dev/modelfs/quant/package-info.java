/**
 * Number crunching: block dequantizers to f32 and float casts, each hot loop scalar and with the Vector API, byte-
 * identical; Kernels picks one per JVM (docs/DESIGN.md §2.6).
 *
 * <p>May import: {@code format} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.quant;
