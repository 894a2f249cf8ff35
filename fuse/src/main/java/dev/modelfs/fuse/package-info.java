/**
 * The FUSE front end: MountSession assembles it; ModelFs answers the callbacks; FuseWorkers drive libfuse; the
 * three READ paths ReadBufUpcall, SmallReads and RingEntries; kernel passthrough and FUSE over io_uring
 * (docs/DESIGN.md §2.6, §2.11).
 *
 * <p>May import: {@code cache}, {@code read}, {@code serve}, {@code store}, {@code telemetry}, {@code tree}, {@code warmup} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.fuse;
