package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The INIT and OPEN rewriting against the kernel's structures as {@code <linux/fuse.h>} (7.44) declares them: each
 * structure is written here as its list of fields and sizes, and the offsets the test reads and writes are summed
 * from that list, not taken from the code under test.
 */
class PassthroughProtocolTest {
    /** A C structure of fixed-size fields without padding (every FUSE structure here is laid out so). */
    private static final class Struct {
        final Map<String, Integer> offsets = new LinkedHashMap<>();
        int size;

        Struct field(String name, int bytes) {
            offsets.put(name, size);
            size += bytes;
            return this;
        }

        int at(String name) {
            return offsets.get(name);
        }
    }

    static final Struct IN_HEADER = new Struct().field("len", 4).field("opcode", 4).field("unique", 8).field("nodeid", 8)
            .field("uid", 4).field("gid", 4).field("pid", 4).field("total_extlen", 2).field("padding", 2);
    static final Struct OUT_HEADER = new Struct().field("len", 4).field("error", 4).field("unique", 8);
    static final Struct INIT_IN = new Struct().field("major", 4).field("minor", 4).field("max_readahead", 4)
            .field("flags", 4).field("flags2", 4).field("unused", 44);
    static final Struct INIT_OUT = new Struct().field("major", 4).field("minor", 4).field("max_readahead", 4)
            .field("flags", 4).field("max_background", 2).field("congestion_threshold", 2).field("max_write", 4)
            .field("time_gran", 4).field("max_pages", 2).field("map_alignment", 2).field("flags2", 4)
            .field("max_stack_depth", 4).field("request_timeout", 2).field("unused", 22);
    /** libfuse 2.9's {@code fuse_init_out} (7.19): the first seven fields, 24 bytes. */
    static final int LIBFUSE_INIT_OUT = 24;
    static final Struct OPEN_OUT = new Struct().field("fh", 8).field("open_flags", 4).field("backing_id", 4);

    static final long FUSE_INIT_EXT = 1L << 30;
    static final long FUSE_PASSTHROUGH = 1L << 37;
    static final long FUSE_OVER_IO_URING = 1L << 41;
    static final long FUSE_ASYNC_READ = 1L << 0;
    static final long FUSE_SPLICE_WRITE = 1L << 7;
    static final long FUSE_HAS_EXPIRE_ONLY = 1L << 35;
    static final int FOPEN_KEEP_CACHE = 1 << 1;
    static final int FOPEN_PASSTHROUGH = 1 << 7;

    private final Arena arena = Arena.ofAuto();

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private MemorySegment native_(ByteBuffer b, int capacity) {
        MemorySegment m = arena.allocate(capacity, 8);
        MemorySegment.copy(MemorySegment.ofArray(b.array()), 0, m, 0, b.capacity());
        return m;
    }

    /** An INIT request as Linux sends it, with capability bits {@code caps} split over flags and flags2. */
    private MemorySegment initRequest(long caps) {
        ByteBuffer b = le(IN_HEADER.size + INIT_IN.size);
        b.putInt(IN_HEADER.at("len"), b.capacity()).putInt(IN_HEADER.at("opcode"), 26).putLong(IN_HEADER.at("unique"), 2);
        int in = IN_HEADER.size;
        b.putInt(in + INIT_IN.at("major"), 7).putInt(in + INIT_IN.at("minor"), 44).putInt(in + INIT_IN.at("max_readahead"), 131072)
                .putInt(in + INIT_IN.at("flags"), (int) caps).putInt(in + INIT_IN.at("flags2"), (int) (caps >>> 32));
        return native_(b, b.capacity());
    }

    @Test
    void anInitOfferingPassthroughIsRecognisedAndOnlyThatOne() {
        long base = FUSE_ASYNC_READ | FUSE_SPLICE_WRITE | FUSE_HAS_EXPIRE_ONLY;
        int len = IN_HEADER.size + INIT_IN.size;
        assertEquals(26, PassthroughProtocol.opcode(initRequest(base)));
        assertTrue(PassthroughProtocol.offersPassthrough(initRequest(base | FUSE_INIT_EXT | FUSE_PASSTHROUGH), len));
        assertFalse(PassthroughProtocol.offersPassthrough(initRequest(base | FUSE_INIT_EXT), len), "no FUSE_PASSTHROUGH");
        assertFalse(PassthroughProtocol.offersPassthrough(initRequest(base | FUSE_PASSTHROUGH), len),
                "flags2 is meaningless without FUSE_INIT_EXT");
        assertFalse(PassthroughProtocol.offersPassthrough(initRequest(base | FUSE_INIT_EXT | FUSE_PASSTHROUGH),
                IN_HEADER.size + 16), "an old kernel's INIT has no flags2");
        MemorySegment open = initRequest(base | FUSE_INIT_EXT | FUSE_PASSTHROUGH);
        open.set(ValueLayout.JAVA_INT, IN_HEADER.at("opcode"), 14);
        assertFalse(PassthroughProtocol.offersPassthrough(open, len), "not an INIT");
    }

    @Test
    void anInitOfferingIoUringIsRecognisedApartFromPassthrough() {
        long base = FUSE_ASYNC_READ | FUSE_SPLICE_WRITE | FUSE_INIT_EXT;
        int len = IN_HEADER.size + INIT_IN.size;
        assertTrue(PassthroughProtocol.offersIoUring(initRequest(base | FUSE_OVER_IO_URING), len));
        assertFalse(PassthroughProtocol.offersPassthrough(initRequest(base | FUSE_OVER_IO_URING), len));
        assertFalse(PassthroughProtocol.offersIoUring(initRequest(base | FUSE_PASSTHROUGH), len));
        assertFalse(PassthroughProtocol.offersIoUring(initRequest((base & ~FUSE_INIT_EXT) | FUSE_OVER_IO_URING), len),
                "flags2 is meaningless without FUSE_INIT_EXT");
        assertFalse(PassthroughProtocol.offersIoUring(initRequest(base | FUSE_OVER_IO_URING), IN_HEADER.size + 16),
                "an old kernel's INIT has no flags2");
    }

    @Test
    void acceptingIoUringAloneSetsItsBitAndLeavesTheStackDepthUnset() {
        ByteBuffer b = le(OUT_HEADER.size + LIBFUSE_INIT_OUT);
        b.putInt(OUT_HEADER.at("len"), b.capacity()).putInt(OUT_HEADER.at("error"), 0).putLong(OUT_HEADER.at("unique"), 2);
        int o = OUT_HEADER.size;
        b.putInt(o + INIT_OUT.at("major"), 7).putInt(o + INIT_OUT.at("minor"), 19).putInt(o + INIT_OUT.at("flags"), (int) FUSE_ASYNC_READ);
        MemorySegment reply = native_(b, OUT_HEADER.size + INIT_OUT.size);

        long length = PassthroughProtocol.accept(reply, b.capacity(), (int) (FUSE_OVER_IO_URING >>> 32));

        assertEquals(OUT_HEADER.size + INIT_OUT.size, length);
        ByteBuffer r = reply.asSlice(0, length).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        long caps = Integer.toUnsignedLong(r.getInt(o + INIT_OUT.at("flags"))) | (long) r.getInt(o + INIT_OUT.at("flags2")) << 32;
        assertEquals(FUSE_ASYNC_READ | FUSE_INIT_EXT | FUSE_OVER_IO_URING, caps);
        assertEquals(0, r.getInt(o + INIT_OUT.at("max_stack_depth")), "only passthrough reads the stack depth");

        MemorySegment both = native_(b, OUT_HEADER.size + INIT_OUT.size);
        long l2 = PassthroughProtocol.accept(both, b.capacity(), (int) ((FUSE_OVER_IO_URING | FUSE_PASSTHROUGH) >>> 32));
        ByteBuffer r2 = both.asSlice(0, l2).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals((FUSE_OVER_IO_URING | FUSE_PASSTHROUGH) >>> 32, r2.getInt(o + INIT_OUT.at("flags2")));
        assertEquals(1, r2.getInt(o + INIT_OUT.at("max_stack_depth")));
    }

    @Test
    void libfusesInitReplyIsExtendedToAcceptPassthroughKeepingEveryOtherField() {
        ByteBuffer b = le(OUT_HEADER.size + LIBFUSE_INIT_OUT);
        b.putInt(OUT_HEADER.at("len"), b.capacity()).putInt(OUT_HEADER.at("error"), 0).putLong(OUT_HEADER.at("unique"), 2);
        int o = OUT_HEADER.size;
        int flags = (int) (FUSE_ASYNC_READ | FUSE_SPLICE_WRITE);
        b.putInt(o + INIT_OUT.at("major"), 7).putInt(o + INIT_OUT.at("minor"), 19).putInt(o + INIT_OUT.at("max_readahead"), 131072)
                .putInt(o + INIT_OUT.at("flags"), flags).putShort(o + INIT_OUT.at("max_background"), (short) 12)
                .putShort(o + INIT_OUT.at("congestion_threshold"), (short) 9).putInt(o + INIT_OUT.at("max_write"), 131072);
        MemorySegment reply = native_(b, OUT_HEADER.size + INIT_OUT.size);
        reply.asSlice(b.capacity()).fill((byte) 0x5a);                 // whatever lies beyond must not leak into the reply

        long length = PassthroughProtocol.acceptPassthrough(reply, b.capacity());

        assertEquals(OUT_HEADER.size + INIT_OUT.size, length, "the whole 64-byte fuse_init_out");
        ByteBuffer r = reply.asSlice(0, length).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(length, r.getInt(OUT_HEADER.at("len")));
        assertEquals(0, r.getInt(OUT_HEADER.at("error")));
        assertEquals(2, r.getLong(OUT_HEADER.at("unique")));
        assertEquals(7, r.getInt(o + INIT_OUT.at("major")));
        assertEquals(19, r.getInt(o + INIT_OUT.at("minor")), "libfuse's protocol version stays");
        assertEquals(131072, r.getInt(o + INIT_OUT.at("max_readahead")));
        assertEquals(12, r.getShort(o + INIT_OUT.at("max_background")));
        assertEquals(9, r.getShort(o + INIT_OUT.at("congestion_threshold")));
        assertEquals(131072, r.getInt(o + INIT_OUT.at("max_write")));
        long caps = Integer.toUnsignedLong(r.getInt(o + INIT_OUT.at("flags"))) | (long) r.getInt(o + INIT_OUT.at("flags2")) << 32;
        assertEquals(flags | FUSE_INIT_EXT | FUSE_PASSTHROUGH, caps, "libfuse's capabilities, plus INIT_EXT and PASSTHROUGH");
        assertEquals(1, r.getInt(o + INIT_OUT.at("max_stack_depth")));
        for (String zero : new String[] {"time_gran", "max_pages", "map_alignment", "request_timeout"}) {
            assertEquals(0, r.get(o + INIT_OUT.at(zero)), zero);
        }
        byte[] unused = new byte[22];
        r.get(o + INIT_OUT.at("unused"), unused);
        assertArrayEquals(new byte[22], unused, "nothing beyond libfuse's reply leaks into it");
    }

    @Test
    void anErrorOrUnknownInitReplyIsLeftAlone() {
        ByteBuffer b = le(OUT_HEADER.size);
        b.putInt(OUT_HEADER.at("len"), OUT_HEADER.size).putInt(OUT_HEADER.at("error"), -71).putLong(OUT_HEADER.at("unique"), 2);
        MemorySegment reply = native_(b, OUT_HEADER.size + INIT_OUT.size);
        byte[] before = reply.toArray(ValueLayout.JAVA_BYTE);
        assertEquals(-1, PassthroughProtocol.acceptPassthrough(reply, OUT_HEADER.size));
        assertArrayEquals(before, reply.toArray(ValueLayout.JAVA_BYTE));

        ByteBuffer tooLong = le(OUT_HEADER.size + INIT_OUT.size + 8);
        tooLong.putInt(OUT_HEADER.size + INIT_OUT.at("major"), 7);
        MemorySegment big = native_(tooLong, tooLong.capacity());
        assertEquals(-1, PassthroughProtocol.acceptPassthrough(big, tooLong.capacity()), "a body longer than the kernel's structure");
    }

    @Test
    void anOpenReplyNamesItsBackingFileAndDropsTheFlagsPassthroughRefuses() {
        ByteBuffer b = le(OUT_HEADER.size + OPEN_OUT.size);
        b.putInt(OUT_HEADER.at("len"), b.capacity()).putLong(OUT_HEADER.at("unique"), 99);
        b.putLong(OUT_HEADER.size + OPEN_OUT.at("fh"), 1234).putInt(OUT_HEADER.size + OPEN_OUT.at("open_flags"), FOPEN_KEEP_CACHE);
        MemorySegment reply = native_(b, b.capacity());

        assertEquals(1234, PassthroughProtocol.openHandle(reply, b.capacity()));
        PassthroughProtocol.passThrough(reply, 7);

        ByteBuffer r = reply.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1234, r.getLong(OUT_HEADER.size + OPEN_OUT.at("fh")));
        assertEquals(FOPEN_PASSTHROUGH, r.getInt(OUT_HEADER.size + OPEN_OUT.at("open_flags")),
                "FOPEN_KEEP_CACHE is refused with passthrough by the kernel");
        assertEquals(7, r.getInt(OUT_HEADER.size + OPEN_OUT.at("backing_id")));
        assertEquals(b.capacity(), r.getInt(OUT_HEADER.at("len")));
        assertEquals(99, r.getLong(OUT_HEADER.at("unique")));

        MemorySegment failed = native_(le(OUT_HEADER.size).putInt(0, OUT_HEADER.size).putInt(4, -2), OUT_HEADER.size);
        assertEquals(-1, PassthroughProtocol.openHandle(failed, OUT_HEADER.size), "an open that failed has no handle");
    }
}
