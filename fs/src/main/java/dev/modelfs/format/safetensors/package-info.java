/**
 * safetensors: header parsing and validation (SafetensorsParser), its model (SafetensorsHeader, TensorEntry,
 * Dtype) and the layout of written headers (SafetensorsWriter) (docs/FORMATS.md §2).
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.format.safetensors;
