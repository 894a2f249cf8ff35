/**
 * Converted tensor bytes computed per chunk: UnitConverted over a UnitSource (blocks, MLX groups, shifted,
 * repacked) and the ConvertedData that is not a tensor (docs/FORMATS.md §7).
 *
 * <p>May import: {@code bytes}, {@code cache}, {@code format}, {@code model}, {@code quant} (docs/DESIGN.md §2.3, enforced by
 * {@code LayeringTest}; {@code cache} for {@code MappedPages}, mapped pages brought in from native code).
 */
package dev.modelfs.convert;
