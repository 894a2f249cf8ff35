/**
 * A file as a ByteSource of segments (Literal, Zeros, BlobSlice, Converted) and how blobs are resolved and files
 * assembled (docs/DESIGN.md §2.5).
 *
 * <p>May import: {@code cache}, {@code format}, {@code store}, {@code telemetry} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.bytes;
