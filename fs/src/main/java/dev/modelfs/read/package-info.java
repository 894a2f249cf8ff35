/**
 * Serving an open file's bytes: OpenedSource (leases, the read of a range, blob segments for splice), read-ahead
 * of converted chunks, the errno of a failure.
 *
 * <p>May import: {@code bytes}, {@code cache}, {@code store}, {@code telemetry} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.read;
