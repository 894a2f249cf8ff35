package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.HeapCharge;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the header of a little-endian GGUF v2/v3 file (docs/FORMATS.md §6.1): magic, version, counts,
 * metadata KVs and tensor infos. Tensor data is not touched: only the header bytes are read, so this
 * is cheap on multi-GB mmapped blobs.
 *
 * <p>Checks, each a {@link FormatException} with a one-line message (nothing else is thrown for any
 * input bytes): magic {@code GGUF}; big-endian files (magic {@code FUGG} or a byte-swapped version)
 * and v1 rejected; every length, count and offset checked against the bytes left before it is used;
 * counts and lengths also capped by {@link #MAX_KVS}, {@link #MAX_TENSORS},
 * {@link #MAX_ARRAY_ELEMENTS}, {@link #MAX_STRING_BYTES}; non-empty unique keys; known value
 * types; no nested arrays; {@code general.alignment} UINT32 and a power of two (else 32); tensor names
 * unique; at most 4 dims; known ggml type ids; {@code ne[0]} a multiple of the block size; sizes
 * without overflow; offsets multiples of the alignment; every tensor inside the file. Offsets are
 * not required to be sequential (ggml is stricter; see §6.1).
 *
 * <p>Keys and tensor names must be valid UTF-8. String <em>values</em> are decoded leniently
 * (malformed sequences become U+FFFD, as ggml does not validate them); their exact bytes remain
 * available through {@link GgufKv#rawOffset()}/{@link GgufKv#rawLength()}. BOOL bytes other than 0
 * read as true, like ggml. Stateless and thread-safe.
 */
public final class GgufReader {

    /** Magic {@code "GGUF"} read as a little-endian uint32. */
    static final int MAGIC = 0x46554747;
    /** Magic of a big-endian file as Ollama recognises it ({@code "FUGG"} on disk). */
    static final int MAGIC_BE = 0x47475546;

    /** Most metadata KVs accepted (real files have well under 100). */
    public static final long MAX_KVS = 1L << 20;
    /** Most tensors accepted (the largest real models have a few thousand). */
    public static final long MAX_TENSORS = 1L << 20;
    /** Most elements in one array value (real vocabularies have up to a few hundred thousand). */
    public static final long MAX_ARRAY_ELEMENTS = 1L << 24;
    /** Longest string accepted, in bytes (chat templates are kilobytes). */
    public static final long MAX_STRING_BYTES = 1L << 26;

    /** Heap charged for one KV beyond its key and value: the record, its list slot, the duplicate-key set's entry. */
    static final long KV_HEAP = 96;
    /** Heap charged for one string beyond 2 bytes per encoded byte (UTF-16 at worst): the String, its array header, a reference. */
    static final long STRING_HEAP = 48;
    /** Heap charged for one array element beyond a string's characters: two list slots and a boxed scalar or a String. */
    static final long ELEMENT_HEAP = 24 + STRING_HEAP;

    /** Smallest possible KV: key length + 1-byte key + type + 1-byte value. */
    private static final int MIN_KV_BYTES = 8 + 1 + 4 + 1;
    /** Smallest possible tensor info: name length + n_dims + type + offset. */
    private static final int MIN_INFO_BYTES = 8 + 4 + 4 + 8;

    private GgufReader() {
    }

    /**
     * Parses the header, KVs and tensor infos.
     *
     * @throws FormatException if {@code file} is not a valid little-endian GGUF v2/v3 file
     */
    public static GgufFile read(MemorySegment file) {
        return read(file, HeapCharge.NONE);
    }

    /**
     * Parses the header, KVs and tensor infos, charging {@code charge} before each allocation of KVs,
     * arrays and strings ({@link #KV_HEAP}, {@link #ELEMENT_HEAP} per array element up front, then
     * {@link #STRING_HEAP} and 2 bytes per byte of each string): a header whose metadata would take more than
     * its budget stops at the first charge refused, before that structure is allocated. Tensor infos are
     * charged by their names only (the caller counts tensors itself).
     *
     * @throws FormatException if {@code file} is not a valid little-endian GGUF v2/v3 file, or a charge is refused
     */
    public static GgufFile read(MemorySegment file, HeapCharge charge) {
        return read(file, charge, end -> { }, file.byteSize());
    }

    /**
     * Like {@link #read(MemorySegment, HeapCharge)}, calling {@code pageIn} with an offset before reading bytes past
     * {@code resident} below it, a few MiB ahead at a time: a mapped file's caller brings those pages in from native
     * code there, so that a disk slow to deliver them never holds the JVM's safepoints while Java code faults on them.
     */
    public static GgufFile read(MemorySegment file, HeapCharge charge, java.util.function.LongConsumer pageIn, long resident) {
        long size = file.byteSize();
        LeCursor in = new LeCursor(file, 0, pageIn, resident);
        if (size < 4) {
            throw new FormatException("not a GGUF file: " + size + " bytes");
        }
        int magic = in.i32();
        if (magic == MAGIC_BE) {
            throw new FormatException("big-endian GGUF is not supported");
        }
        if (magic != MAGIC) {
            throw new FormatException(String.format("not a GGUF file: magic 0x%08x", magic));
        }
        if (size < 24) {
            throw new FormatException("GGUF file truncated: " + size + " bytes, the fixed header needs 24");
        }
        int version = in.i32();
        if (version != 0 && (version & 0xFFFF) == 0) {
            throw new FormatException("big-endian GGUF is not supported (byte-swapped version "
                    + Integer.toUnsignedString(Integer.reverseBytes(version)) + ")");
        }
        if (version == 1) {
            throw new FormatException("GGUF v1 is not supported");
        }
        if (version != 2 && version != 3) {
            throw new FormatException("unsupported GGUF version " + Integer.toUnsignedString(version));
        }
        long tensorCount = in.i64();
        long kvCount = in.i64();
        checkCounts(tensorCount, kvCount, in.remaining());

        charge.charge(kvCount * KV_HEAP);
        List<GgufKv> kvs = readKvs(in, (int) kvCount, charge);
        GgufKv alignKv = kvs.stream().filter(kv -> kv.key().equals(GgufFile.ALIGNMENT_KEY)).findFirst().orElse(null);
        long alignment = GgufFile.alignmentOf(alignKv);

        List<GgufTensorInfo> tensors = readTensorInfos(in, (int) tensorCount, alignment, charge);
        long dataStart;
        try {
            dataStart = GgufWriter.align(in.pos(), alignment);
        } catch (FormatException e) {
            throw new FormatException("GGUF data start overflows");
        }
        for (GgufTensorInfo t : tensors) {
            checkInside(t, dataStart, size);
        }
        return new GgufFile(version, alignment, kvs, tensors, dataStart);
    }

    private static void checkCounts(long tensorCount, long kvCount, long remaining) {
        if (tensorCount < 0 || tensorCount > MAX_TENSORS || tensorCount > remaining / MIN_INFO_BYTES) {
            throw new FormatException("GGUF tensor count " + Long.toUnsignedString(tensorCount)
                    + " is impossible for a file of this size");
        }
        if (kvCount < 0 || kvCount > MAX_KVS || kvCount > remaining / MIN_KV_BYTES) {
            throw new FormatException("GGUF KV count " + Long.toUnsignedString(kvCount)
                    + " is impossible for a file of this size");
        }
        if (tensorCount * MIN_INFO_BYTES + kvCount * MIN_KV_BYTES > remaining) { // both <= 2^20 * 24: no overflow
            throw new FormatException("GGUF counts (" + kvCount + " KVs, " + tensorCount
                    + " tensors) are impossible for a file of this size");
        }
    }

    private static List<GgufKv> readKvs(LeCursor in, int count, HeapCharge charge) {
        List<GgufKv> kvs = new ArrayList<>(count);
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < count; i++) {
            long start = in.pos();
            in.context("GGUF KV #" + i);
            String key = readString(in, true, "key", charge);
            if (key.isEmpty()) {
                throw in.error("empty key");
            }
            in.context("GGUF KV #" + i + " " + GgufText.quote(key));
            if (!keys.add(key)) {
                throw in.error("duplicate key");
            }
            GgufValueType type = valueType(in);
            Object value = readValue(in, type, charge);
            kvs.add(new GgufKv(key, type, value, start, in.pos() - start));
        }
        return kvs;
    }

    private static GgufValueType valueType(LeCursor in) {
        int id = in.i32();
        try {
            return GgufValueType.byId(id);
        } catch (FormatException e) {
            throw in.error(e.getMessage());
        }
    }

    private static Object readValue(LeCursor in, GgufValueType type, HeapCharge charge) {
        if (type == GgufValueType.ARRAY) {
            return readArray(in, charge);
        }
        return readScalar(in, type, charge);
    }

    private static Object readScalar(LeCursor in, GgufValueType type, HeapCharge charge) {
        return switch (type) {
            case UINT8, INT8 -> in.i8();
            case UINT16, INT16 -> in.i16();
            case UINT32, INT32 -> in.i32();
            case UINT64, INT64 -> in.i64();
            case FLOAT32 -> in.f32();
            case FLOAT64 -> in.f64();
            case BOOL -> in.i8() != 0;
            case STRING -> readString(in, false, "string value", charge);
            case ARRAY -> throw in.error("nested arrays are not supported");
        };
    }

    private static GgufArray readArray(LeCursor in, HeapCharge charge) {
        GgufValueType elem = valueType(in);
        if (elem == GgufValueType.ARRAY) {
            throw in.error("nested arrays are not supported");
        }
        long count = in.i64();
        if (count < 0 || count > MAX_ARRAY_ELEMENTS) {
            throw in.error("array of " + Long.toUnsignedString(count) + " elements exceeds the limit of "
                    + MAX_ARRAY_ELEMENTS);
        }
        if (count > in.remaining() / elem.minEncodedSize()) {
            throw in.error("truncated: array of " + count + " " + elem + " elements at offset " + in.pos()
                    + " cannot fit in the " + in.remaining() + " bytes left");
        }
        charge.charge(count * ELEMENT_HEAP);                 // count <= 2^24: no overflow
        HeapCharge strings = elem == GgufValueType.STRING ? bytes -> charge.charge(bytes - STRING_HEAP) : charge;
        List<Object> values = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            values.add(readScalar(in, elem, strings));
        }
        return new GgufArray(elem, values);
    }

    /** A GGUF string: uint64 length + bytes; strict UTF-8 for identifiers, lenient for values. */
    private static String readString(LeCursor in, boolean strict, String what, HeapCharge charge) {
        long len = in.i64();
        if (len < 0 || len > in.remaining()) {
            throw in.error("truncated: " + what + " of " + Long.toUnsignedString(len) + " bytes at offset " + in.pos()
                    + " runs past the end of the file (" + in.remaining() + " bytes left)");
        }
        if (len > MAX_STRING_BYTES) {
            throw in.error(what + " of " + len + " bytes exceeds the limit of " + MAX_STRING_BYTES);
        }
        charge.charge(STRING_HEAP + 2 * len);
        byte[] b = in.bytes((int) len, what);
        return strict ? GgufText.decodeStrict(b, in.context() + ": " + what)
                : new String(b, StandardCharsets.UTF_8);
    }

    private static List<GgufTensorInfo> readTensorInfos(LeCursor in, int count, long alignment, HeapCharge charge) {
        List<GgufTensorInfo> tensors = new ArrayList<>(count);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < count; i++) {
            in.context("GGUF tensor info #" + i);
            String name = readString(in, true, "name", charge);
            in.context("GGUF tensor info #" + i + " " + GgufText.quote(name));
            if (!names.add(name)) {
                throw in.error("duplicate tensor name");
            }
            int nDims = in.i32();
            if (nDims < 0 || nDims > GgufTensorInfo.MAX_DIMS) {
                throw in.error(Integer.toUnsignedString(nDims) + " dimensions, at most " + GgufTensorInfo.MAX_DIMS);
            }
            long[] ne = new long[nDims];
            for (int d = 0; d < nDims; d++) {
                ne[d] = in.i64();
                if (ne[d] < 0) {
                    throw in.error("dimension " + d + " is " + Long.toUnsignedString(ne[d]));
                }
            }
            int typeId = in.i32();
            GgmlType type;
            try {
                type = GgmlType.byId(typeId);
            } catch (FormatException e) {
                throw in.error(e.getMessage());
            }
            long offset = in.i64();
            if (offset < 0 || offset % alignment != 0) {
                throw in.error("offset " + Long.toUnsignedString(offset) + " is not a multiple of alignment " + alignment);
            }
            tensors.add(new GgufTensorInfo(name, ne, type, offset));
        }
        return tensors;
    }

    private static void checkInside(GgufTensorInfo t, long dataStart, long size) {
        long begin;
        long end;
        try {
            begin = Math.addExact(dataStart, t.offset());
            end = Math.addExact(begin, t.byteSize());
        } catch (ArithmeticException e) {
            throw new FormatException("GGUF tensor " + GgufText.quote(t.name()) + ": data offset overflows");
        }
        if (end > size) {
            throw new FormatException("GGUF tensor " + GgufText.quote(t.name()) + ": data [" + begin + ", " + end
                    + ") runs past the end of the file (" + size + " bytes)");
        }
    }
}
