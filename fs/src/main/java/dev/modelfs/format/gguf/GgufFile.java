package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

import java.util.List;
import java.util.Objects;

/**
 * The header of a GGUF file: version, metadata KVs and tensor infos (docs/FORMATS.md §6.1).
 *
 * <p>Invariants (constructor, {@link FormatException} otherwise): {@code version} is 2 or 3;
 * {@code alignment} is a power of two and equals the {@code general.alignment} KV (type UINT32) if
 * present, else 32; {@code kvs} and {@code tensors} are immutable, in file order, with unique keys
 * and unique names; {@code dataStart} is a multiple of {@code alignment} and at least 24; every
 * tensor offset is a multiple of {@code alignment}. Files returned by {@link GgufReader#read}
 * additionally have every tensor's bytes {@code [dataStart + offset, + byteSize())} inside the file.
 */
public record GgufFile(int version, long alignment, List<GgufKv> kvs, List<GgufTensorInfo> tensors, long dataStart) {

    /** Key of the alignment KV. */
    public static final String ALIGNMENT_KEY = "general.alignment";
    /** Alignment when {@value #ALIGNMENT_KEY} is absent ({@code GGUF_DEFAULT_ALIGNMENT}). */
    public static final long DEFAULT_ALIGNMENT = 32;

    public GgufFile {
        if (version != 2 && version != 3) {
            throw new FormatException("unsupported GGUF version " + Integer.toUnsignedString(version));
        }
        kvs = new IndexedList<>(Objects.requireNonNull(kvs, "kvs"), GgufKv::key, "GGUF key");
        tensors = new IndexedList<>(Objects.requireNonNull(tensors, "tensors"), GgufTensorInfo::name, "GGUF tensor name");
        long expected = alignmentOf(((IndexedList<GgufKv>) kvs).byKey(ALIGNMENT_KEY));
        if (alignment != expected) {
            throw new FormatException("GGUF alignment " + alignment + " does not match " + ALIGNMENT_KEY + " " + expected);
        }
        if (dataStart < 24 || dataStart % alignment != 0) {
            throw new FormatException("GGUF data start " + dataStart + " is not a multiple of alignment " + alignment);
        }
        for (GgufTensorInfo t : tensors) {
            if (t.offset() % alignment != 0) {
                throw new FormatException("GGUF tensor " + GgufText.quote(t.name()) + ": offset " + t.offset()
                        + " is not a multiple of alignment " + alignment);
            }
        }
    }

    /**
     * Alignment defined by an optional {@code general.alignment} KV.
     *
     * @throws FormatException if the KV is not UINT32 or not a power of two
     */
    static long alignmentOf(GgufKv kv) {
        if (kv == null) {
            return DEFAULT_ALIGNMENT;
        }
        if (kv.type() != GgufValueType.UINT32) {
            throw new FormatException(ALIGNMENT_KEY + " must be UINT32, is " + kv.type());
        }
        long a = Integer.toUnsignedLong((Integer) kv.value());
        if (a == 0 || (a & (a - 1)) != 0) {
            throw new FormatException(ALIGNMENT_KEY + " " + a + " is not a power of two");
        }
        return a;
    }

    /** The KV with this key, or null. */
    public GgufKv kv(String key) {
        return ((IndexedList<GgufKv>) kvs).byKey(key);
    }

    /** The tensor info with this name, or null. */
    public GgufTensorInfo tensor(String name) {
        return ((IndexedList<GgufTensorInfo>) tensors).byKey(name);
    }
}
