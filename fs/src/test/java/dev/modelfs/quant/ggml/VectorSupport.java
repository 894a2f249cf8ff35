package dev.modelfs.quant.ggml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import static dev.modelfs.format.LittleEndian.I32;

import dev.modelfs.quant.BlockDequantizer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

/** Helpers shared by the GGML dequantizer tests. */
final class VectorSupport {
    private VectorSupport() {}


    static byte[] hex(String s) {
        return HexFormat.of().parseHex(s);
    }

    /**
     * Dequantizes {@code data} (whole blocks) with {@code k} into a fresh native segment, placing source
     * and destination at odd offsets so unaligned access is exercised too, and returns the f32 bits.
     */
    static int[] run(BlockDequantizer k, byte[] data) {
        if (data.length % k.blockBytes() != 0) {
            fail("data length " + data.length + " is not a multiple of block bytes " + k.blockBytes());
        }
        final long blocks = data.length / k.blockBytes();
        final int outFloats = Math.toIntExact(blocks * k.blockElements());
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment src = arena.allocate(data.length + 3L);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, src, 3, data.length);
            final MemorySegment dst = arena.allocate(outFloats * 4L + 5L);
            k.dequantize(src, 3, dst, 5, blocks);
            final int[] bits = new int[outFloats];
            for (int i = 0; i < outFloats; i++) {
                bits[i] = dst.get(I32, 5 + 4L * i);
            }
            return bits;
        }
    }

    static int[] f32Bits(byte[] le) {
        final MemorySegment seg = MemorySegment.ofArray(le);
        final int[] bits = new int[le.length / 4];
        for (int i = 0; i < bits.length; i++) {
            bits[i] = seg.get(I32, 4L * i);
        }
        return bits;
    }

    /** Bit-for-bit comparison; any NaN matches any NaN (payloads and signs of NaNs are platform noise). */
    static void assertSameFloats(String what, int[] expected, int[] actual) {
        assertEquals(expected.length, actual.length, what + ": number of floats");
        int bad = 0;
        final StringBuilder msg = new StringBuilder();
        for (int i = 0; i < expected.length; i++) {
            final float e = Float.intBitsToFloat(expected[i]);
            final float a = Float.intBitsToFloat(actual[i]);
            final boolean same = expected[i] == actual[i] || (Float.isNaN(e) && Float.isNaN(a));
            if (!same) {
                if (bad < 8) {
                    msg.append(String.format("%n  [%d] expected %s (0x%08x) got %s (0x%08x)", i, e, expected[i], a, actual[i]));
                }
                bad++;
            }
        }
        if (bad != 0) {
            fail(what + ": " + bad + " of " + expected.length + " floats differ" + msg);
        }
    }
}
