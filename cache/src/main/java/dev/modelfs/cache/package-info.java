/**
 * Bounded, evictable state that knows no file format and no protocol: shared mmaps of blob files and their leases
 * (BlobMappings), pread through FFM (NativeFile), the memory cache of converted chunks (ChunkCache, BufferSlab)
 * and its disk tier (DiskChunkStore: ChunkFileFormat, ChunkDirectory, ChunkWriter).
 *
 * <p>May import: no other modelfs package (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.cache;
