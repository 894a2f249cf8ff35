package dev.modelfs.quant;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The three kinds of segment the kernels see: heap arrays, native memory and file mappings (as blobs are read). */
public enum SegmentKinds {
    HEAP, NATIVE, MAPPED;

    /**
     * A writable segment of {@code bytes.length} bytes holding {@code bytes}; mapped ones are backed by a temporary
     * file that is deleted at once (the mapping keeps it alive until {@code arena} closes).
     */
    public MemorySegment holding(Arena arena, byte[] bytes) {
        return switch (this) {
            case HEAP -> MemorySegment.ofArray(bytes.clone());
            case NATIVE -> arena.allocate(Math.max(1, bytes.length), 1).copyFrom(MemorySegment.ofArray(bytes))
                    .asSlice(0, bytes.length);
            case MAPPED -> mapped(arena, bytes);
        };
    }

    private static MemorySegment mapped(Arena arena, byte[] bytes) {
        try {
            Path f = Files.createTempFile("modelfs-kernel", ".bin");
            try {
                Files.write(f, bytes);
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes.length, arena);
                }
            } finally {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
