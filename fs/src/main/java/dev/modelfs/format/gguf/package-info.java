/**
 * GGUF: header reading (GgufReader), the model of a file (GgufFile, GgufKv, GgufTensorInfo), header pieces for
 * writing (GgufWriter) and the ggml types (GgmlType) (docs/FORMATS.md §3).
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.format.gguf;
