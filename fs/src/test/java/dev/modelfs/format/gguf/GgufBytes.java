package dev.modelfs.format.gguf;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Assembles GGUF test files from encoded pieces. */
final class GgufBytes {
    private final List<byte[]> kvs = new ArrayList<>();
    private final List<byte[]> infos = new ArrayList<>();
    private int version = 3;
    private long alignment = 32;
    private long dataBytes;
    private Long kvCount;
    private Long tensorCount;

    GgufBytes version(int v) {
        version = v;
        return this;
    }

    GgufBytes alignment(long a) {
        alignment = a;
        return this;
    }

    GgufBytes kv(String key, GgufValueType type, Object value) {
        return rawKv(GgufWriter.encodeKv(key, type, value));
    }

    GgufBytes rawKv(byte[] raw) {
        kvs.add(raw);
        return this;
    }

    GgufBytes tensor(String name, long[] ne, GgmlType type, long offset) {
        return rawInfo(GgufWriter.encodeTensorInfo(name, ne, type, offset));
    }

    GgufBytes rawInfo(byte[] raw) {
        infos.add(raw);
        return this;
    }

    GgufBytes data(long bytes) {
        dataBytes = bytes;
        return this;
    }

    GgufBytes counts(long tensors, long kvs) {
        tensorCount = tensors;
        kvCount = kvs;
        return this;
    }

    byte[] build() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        // written by hand (not GgufWriter.preamble) so tests can put any version and count in it
        out.writeBytes(ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN)
                .put("GGUF".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putInt(version)
                .putLong(tensorCount != null ? tensorCount : infos.size())
                .putLong(kvCount != null ? kvCount : kvs.size()).array());
        kvs.forEach(out::writeBytes);
        infos.forEach(out::writeBytes);
        if (!infos.isEmpty() || dataBytes > 0) {
            out.writeBytes(new byte[(int) (GgufWriter.align(out.size(), alignment) - out.size())]);
        }
        out.writeBytes(new byte[(int) dataBytes]);
        return out.toByteArray();
    }

    MemorySegment segment() {
        return MemorySegment.ofArray(build());
    }

    /** A raw string field: uint64 length then bytes. */
    static byte[] str(long declaredLength, byte[] bytes) {
        ByteBuffer b = ByteBuffer.allocate(8 + bytes.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(declaredLength).put(bytes);
        return b.array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] u32(int v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    static byte[] u64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }
}
