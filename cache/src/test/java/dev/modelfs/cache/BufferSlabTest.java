package dev.modelfs.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BufferSlabTest {
    private static final long MIB = 1 << 20;

    @Test
    void handsOutDistinctAlignedZeroedBuffersUntilUsedUp() {
        try (Arena arena = Arena.ofShared()) {
            BufferSlab slab = BufferSlab.reserve(4, MIB, arena);
            assertNotNull(slab);
            Set<Long> starts = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                MemorySegment b = slab.next();
                assertNotNull(b, "buffer " + i);
                assertEquals(MIB, b.byteSize());
                assertEquals(0, b.address() % MIB, "aligned to its size");
                assertEquals(0, b.get(ValueLayout.JAVA_LONG, MIB - 8), "fresh pages are zero");
                b.fill((byte) (i + 1));                            // writable, and no overlap with the others (checked below)
                starts.add(b.address());
            }
            assertEquals(4, starts.size());
            assertNull(slab.next(), "used up");
            assertNull(slab.next(), "still used up");
        }
    }

    @Test
    void buffersDieWithTheirArenaAndNothingIsReservedForNothing() {
        MemorySegment b;
        try (Arena arena = Arena.ofShared()) {
            b = BufferSlab.reserve(1, MIB, arena).next();
            b.set(ValueLayout.JAVA_BYTE, 0, (byte) 7);
            assertNull(BufferSlab.reserve(0, MIB, arena));
            assertNull(BufferSlab.reserve(1, 3000, arena), "buffer sizes are powers of two");
        }
        assertThrows(IllegalStateException.class, () -> b.get(ValueLayout.JAVA_BYTE, 0), "unmapped with the arena: an exception, not a crash");
    }

    @Test
    void aHugeReservationCostsNoResidentMemory() {
        try (Arena arena = Arena.ofShared()) {
            BufferSlab slab = BufferSlab.reserve(64 * 1024, MIB, arena);     // 64 GiB of address space, MAP_NORESERVE
            assertNotNull(slab);
            assertTrue(slab.next() != null);
        }
    }

    @Test
    void populatedBuffersAreFaultedInBeforeTheyAreWritten() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            BufferSlab slab = BufferSlab.reserve(8, MIB, arena);
            assertNotNull(slab);
            MemorySegment plain = slab.next();
            long f0 = minorFaults();
            plain.fill((byte) 1);
            long plainFaults = minorFaults() - f0;
            assertTrue(plainFaults >= 128, "the control: a fresh buffer faults its pages in as it is written (" + plainFaults + ")");

            java.util.List<MemorySegment> populated = slab.nextPopulated(4);
            assertEquals(4, populated.size());
            Set<Long> starts = new HashSet<>();
            long f1 = minorFaults();
            for (MemorySegment b : populated) {
                assertEquals(MIB, b.byteSize());
                assertEquals(0, b.address() % MIB);
                assertEquals(0, b.get(ValueLayout.JAVA_LONG, MIB / 2), "populated pages are zero");
                b.fill((byte) 2);
                starts.add(b.address());
            }
            long populatedFaults = minorFaults() - f1;
            assertTrue(populatedFaults < plainFaults, "4 populated MiB take fewer faults (" + populatedFaults
                    + ") than 1 fresh MiB (" + plainFaults + ")");
            assertEquals(4, starts.size());
            assertTrue(!starts.contains(plain.address()));
            assertEquals(3, slab.nextPopulated(10).size(), "only what is left of the range");
            assertEquals(0, slab.nextPopulated(1).size());
            assertNull(slab.next());
        }
    }

    /** Minor page faults of the calling thread so far ({@code /proc/thread-self/stat}, field 10). */
    private static long minorFaults() throws java.io.IOException {
        String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/thread-self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[7]);
    }
}
