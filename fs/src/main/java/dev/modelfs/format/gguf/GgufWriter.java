package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Objects;

/**
 * Encodes the pieces of a little-endian GGUF header (docs/FORMATS.md §6.1) byte-exactly as ggml writes
 * them, so that a view can assemble {@code preamble + KVs + tensor infos + zero padding to the
 * alignment + tensor data}. Every method is a pure function of its arguments; stateless and
 * thread-safe. Invalid arguments (anything that would give a file ggml cannot load) are a
 * {@link FormatException}.
 */
public final class GgufWriter {

    /** {@code GGML_MAX_NAME}: ggml requires tensor names shorter than this many UTF-8 bytes. */
    public static final int MAX_TENSOR_NAME_BYTES = 64;

    private GgufWriter() {
    }

    /** The 24-byte fixed header: magic {@code GGUF}, version (2 or 3), tensor count, KV count. */
    public static byte[] preamble(int version, long tensorCount, long kvCount) {
        if (version != 2 && version != 3) {
            throw new FormatException("cannot write GGUF version " + version);
        }
        if (tensorCount < 0 || kvCount < 0) {
            throw new FormatException("negative GGUF count");
        }
        Sink out = new Sink(24);
        out.i32(GgufReader.MAGIC);
        out.i32(version);
        out.i64(tensorCount);
        out.i64(kvCount);
        return out.toByteArray();
    }

    /**
     * One encoded KV: key string, uint32 type, value. {@code value} uses the Java types of
     * {@link GgufKv} (unsigned values as same-width signed values); floats keep their exact bits.
     *
     * @throws FormatException for an empty key, a value of the wrong Java type, a nested array or a
     *                         string with unpaired surrogates
     */
    public static byte[] encodeKv(String key, GgufValueType type, Object value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(type, "type");
        if (key.isEmpty()) {
            throw new FormatException("empty GGUF key");
        }
        String what = "GGUF KV " + GgufText.quote(key);
        type.checkValue(value, what);
        Sink out = new Sink(32);
        out.string(key, what + " key");
        out.i32(type.id());
        if (type == GgufValueType.ARRAY) {
            GgufArray a = (GgufArray) value;
            out.i32(a.elementType().id());
            out.i64(a.size());
            for (Object v : a.values()) {
                out.scalar(a.elementType(), v, what);
            }
        } else {
            out.scalar(type, value, what);
        }
        return out.toByteArray();
    }

    /**
     * One encoded tensor info: name, uint32 n_dims ({@code ne.length}), uint64 dims, uint32 type,
     * uint64 offset (relative to the data start).
     *
     * @throws FormatException if the info violates a {@link GgufTensorInfo} invariant or the name is
     *                         not shorter than {@value #MAX_TENSOR_NAME_BYTES} UTF-8 bytes
     */
    public static byte[] encodeTensorInfo(String name, long[] ne, GgmlType type, long offset) {
        GgufTensorInfo info = new GgufTensorInfo(name, ne, type, offset);
        String what = "GGUF tensor " + GgufText.quote(name);
        byte[] nameBytes = GgufText.encodeStrict(name, what + " name");
        if (nameBytes.length >= MAX_TENSOR_NAME_BYTES) {
            throw new FormatException(what + ": name is " + nameBytes.length + " bytes, ggml allows at most "
                    + (MAX_TENSOR_NAME_BYTES - 1));
        }
        Sink out = new Sink(8 + nameBytes.length + 4 + 8 * info.rank() + 12);
        out.i64(nameBytes.length);
        out.write(nameBytes, 0, nameBytes.length);
        out.i32(info.rank());
        for (long d : info.ne()) {
            out.i64(d);
        }
        out.i32(type.id());
        out.i64(offset);
        return out.toByteArray();
    }

    /**
     * {@code x} rounded up to a multiple of {@code alignment}.
     *
     * @throws FormatException if {@code x < 0}, {@code alignment} is not a positive power of two, or the
     *                         result overflows
     */
    public static long align(long x, long alignment) {
        if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
            throw new FormatException("GGUF alignment " + alignment + " is not a power of two");
        }
        if (x < 0) {
            throw new FormatException("cannot align negative offset " + x);
        }
        try {
            return Math.addExact(x, alignment - 1) & -alignment;
        } catch (ArithmeticException e) {
            throw new FormatException("aligning " + x + " to " + alignment + " overflows");
        }
    }

    /**
     * Offsets (relative to the data start) of tensors laid out in the given order, each padded to
     * {@code alignment}: ggml's sequential rule of §6.1 ({@code offset[k] = sum of align(size[j]) for
     * j < k}).
     *
     * @throws FormatException for a negative size, a bad alignment or an overflow
     */
    public static long[] tensorOffsets(List<Long> byteSizes, long alignment) {
        long[] out = new long[byteSizes.size()];
        long at = 0;
        for (int i = 0; i < out.length; i++) {
            long size = Objects.requireNonNull(byteSizes.get(i), "byte size");
            if (size < 0) {
                throw new FormatException("negative tensor size " + size);
            }
            out[i] = at;
            long padded = align(size, alignment);
            try {
                at = Math.addExact(at, padded);
            } catch (ArithmeticException e) {
                throw new FormatException("GGUF tensor data size overflows");
            }
        }
        return out;
    }

    /** Little-endian byte sink. */
    private static final class Sink extends ByteArrayOutputStream {
        Sink(int capacity) {
            super(capacity);
        }

        void i32(int v) {
            for (int i = 0; i < 4; i++) {
                write(v >>> (8 * i));
            }
        }

        void i64(long v) {
            for (int i = 0; i < 8; i++) {
                write((int) (v >>> (8 * i)));
            }
        }

        void string(String s, String what) {
            byte[] b = GgufText.encodeStrict(s, what);
            i64(b.length);
            write(b, 0, b.length);
        }

        void scalar(GgufValueType type, Object v, String what) {
            switch (type) {
                case UINT8, INT8 -> write((Byte) v);
                case UINT16, INT16 -> {
                    short s = (Short) v;
                    write(s);
                    write(s >>> 8);
                }
                case UINT32, INT32 -> i32((Integer) v);
                case UINT64, INT64 -> i64((Long) v);
                case FLOAT32 -> i32(Float.floatToRawIntBits((Float) v));
                case FLOAT64 -> i64(Double.doubleToRawLongBits((Double) v));
                case BOOL -> write((Boolean) v ? 1 : 0);
                case STRING -> string((String) v, what + " value");
                case ARRAY -> throw new FormatException(what + ": nested arrays are not supported");
            }
        }
    }
}
