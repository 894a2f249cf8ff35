package dev.modelfs.format.safetensors;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Builds safetensors test files from a raw header string. */
final class StBytes {
    private StBytes() {
    }

    /** 8-byte LE length of {@code header} + its UTF-8 bytes + {@code dataLen} zero bytes. */
    static byte[] file(String header, long dataLen) {
        return file(header.getBytes(StandardCharsets.UTF_8), dataLen);
    }

    static byte[] file(byte[] header, long dataLen) {
        ByteBuffer b = ByteBuffer.allocate(Math.toIntExact(8 + header.length + dataLen)).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header);
        return b.array();
    }

    /** Only the 8-byte length field with an arbitrary value, followed by {@code rest}. */
    static byte[] withLength(long n, byte[] rest) {
        ByteBuffer b = ByteBuffer.allocate(8 + rest.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(n).put(rest);
        return b.array();
    }

    static MemorySegment seg(byte[] bytes) {
        return MemorySegment.ofArray(bytes);
    }

    static SafetensorsHeader parse(String header, long dataLen) {
        return SafetensorsParser.parse(seg(file(header, dataLen)));
    }
}
