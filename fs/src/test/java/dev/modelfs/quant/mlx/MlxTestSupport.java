package dev.modelfs.quant.mlx;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;
import static dev.modelfs.format.LittleEndian.I32;

import dev.modelfs.format.Vectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Shared helpers: locating the shared test vectors, an independent bit-stream packer, LE accessors. */
final class MlxTestSupport {


    private MlxTestSupport() {}

    /** Reads a vector file through the one {@link Vectors} helper; fails if absent. */
    static JsonNode vectors(String file) {
        return Vectors.json(file);
    }

    /** A float written in a vector file: a JSON number, or "Infinity"/"-Infinity"/"NaN". */
    static float jsonFloat(JsonNode n) {
        if (n.isTextual()) return Float.parseFloat(n.asText());
        return (float) n.asDouble();
    }

    static byte[] hex(String s) {
        return HexFormat.of().parseHex(s);
    }

    /**
     * Straightforward reference packer: code {@code i} occupies bits {@code i*bits .. i*bits+bits-1} of a
     * little-endian bit stream (bit 0 = LSB of byte 0), written one bit at a time.
     */
    static byte[] packBitStream(int[] codes, int bits) {
        byte[] out = new byte[(codes.length * bits + 7) / 8];
        for (int i = 0; i < codes.length; i++) {
            for (int j = 0; j < bits; j++) {
                if (((codes[i] >> j) & 1) != 0) {
                    long bit = (long) i * bits + j;
                    out[(int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
                }
            }
        }
        return out;
    }

    /** A native segment of {@code pad + bytes.length + 8} bytes holding {@code bytes} at offset {@code pad}. */
    static MemorySegment at(Arena arena, byte[] bytes, int pad) {
        MemorySegment seg = arena.allocate(pad + bytes.length + 8L, 1);
        seg.fill((byte) 0x5A);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, seg, pad, bytes.length);
        return seg;
    }

    static float[] readF32(MemorySegment seg, long off, int n) {
        float[] out = new float[n];
        for (int i = 0; i < n; i++) out[i] = seg.get(F32, off + 4L * i);
        return out;
    }
}
