/**
 * The NFSv3 + MOUNT v3 front end on oncrpc4j: NfsSession assembles it, NfsServer serves it, bounded before any
 * decoding (docs/DESIGN.md §2.12).
 *
 * <p>May import: {@code bytes}, {@code cache}, {@code read}, {@code serve}, {@code store}, {@code telemetry}, {@code tree}, {@code warmup} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.nfs;
