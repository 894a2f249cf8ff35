package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Lays out a safetensors file the way the reference writer does (docs/FORMATS.md §8.3), so that every
 * reader of §8.2/§8.5 accepts it. Only computes the header bytes and the offsets; the caller streams
 * the tensor data. Stateless and thread-safe; the output is a pure function of the input.
 */
public final class SafetensorsWriter {

    /**
     * Data order of the reference writer: dtype descending in the Rust enum order (§8.3), which is
     * not the declaration order of {@link Dtype}.
     */
    private static final List<Dtype> WRITE_ORDER = List.of(
            Dtype.U64, Dtype.I64, Dtype.F64, Dtype.C64, Dtype.F32, Dtype.U32, Dtype.I32, Dtype.BF16, Dtype.F16,
            Dtype.U16, Dtype.I16, Dtype.F8_E5M2FNUZ, Dtype.F8_E4M3FNUZ, Dtype.F8_E8M0, Dtype.F8_E4M3, Dtype.F8_E5M2,
            Dtype.I8, Dtype.U8, Dtype.F6_E3M2, Dtype.F6_E2M3, Dtype.F4, Dtype.BOOL);

    private static final Map<Dtype, Integer> RANK = new EnumMap<>(Dtype.class);

    static {
        for (int i = 0; i < WRITE_ORDER.size(); i++) {
            RANK.put(WRITE_ORDER.get(i), i);
        }
        if (RANK.size() != Dtype.values().length) {
            throw new ExceptionInInitializerError("WRITE_ORDER must list every Dtype");
        }
    }

    private static final Comparator<Spec> DATA_ORDER = Comparator
            .<Spec>comparingInt(s -> RANK.get(s.dtype()))
            .thenComparing(Spec::name, Names::compareUtf8);

    private SafetensorsWriter() {
    }

    /**
     * A tensor to write. Invariants (constructor, {@link FormatException} otherwise): name is
     * well-formed Unicode and not {@code "__metadata__"}; dtype non-null; dimensions {@code >= 0};
     * the byte size fits in a long and is whole (sub-byte dtypes). The shape is copied in and out.
     */
    public record Spec(String name, Dtype dtype, long[] shape) {
        public Spec {
            Objects.requireNonNull(name, "name");
            if (!Names.isWellFormed(name)) {
                throw new FormatException("tensor name " + Names.quote(name) + " is not valid Unicode");
            }
            if (name.equals(HeaderJsonReader.METADATA_KEY)) {
                throw new FormatException("tensor name " + Names.quote(name) + " is reserved");
            }
            if (dtype == null) {
                throw new FormatException("tensor " + Names.quote(name) + ": missing dtype");
            }
            if (shape == null) {
                throw new FormatException("tensor " + Names.quote(name) + ": missing shape");
            }
            shape = shape.clone();
            TensorEntry.byteSizeOf(name, dtype, shape);
        }

        /** A copy of the shape. */
        @Override
        public long[] shape() {
            return shape.clone();
        }

        /** Size of the tensor's data in bytes. */
        public long byteSize() {
            return TensorEntry.byteSizeOf(name, dtype, shape);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && name.equals(s.name) && dtype == s.dtype && Arrays.equals(shape, s.shape);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, dtype, Arrays.hashCode(shape));
        }

        @Override
        public String toString() {
            return "Spec[" + name + ", " + dtype + Arrays.toString(shape) + "]";
        }
    }

    /**
     * A tensor with its place in the data buffer. Invariant: {@code 0 <= begin},
     * {@code end - begin == spec.byteSize()}; offsets relative to the data start.
     */
    public record Placed(Spec spec, long begin, long end) {
        public Placed {
            Objects.requireNonNull(spec, "spec");
            if (begin < 0 || end < begin || end - begin != spec.byteSize()) {
                throw new FormatException("tensor " + Names.quote(spec.name()) + ": bad placement [" + begin + ", "
                        + end + "]");
            }
        }
    }

    /**
     * The layout of a whole file. Invariants: {@code header} = 8-byte LE length {@code N} + compact
     * JSON padded with spaces, {@code N % 8 == 0}, {@code N <= 100_000_000}; {@code tensors} in data
     * order with contiguous offsets from 0; {@code fileSize = header.length + sum of sizes}. The
     * {@code header} array is shared, not copied: do not modify it.
     */
    public record Layout(byte[] header, List<Placed> tensors, long fileSize) {
        public Layout {
            Objects.requireNonNull(header, "header");
            tensors = List.copyOf(tensors);
        }

        /** Absolute offset of the data buffer ({@code header.length}). */
        public long dataStart() {
            return header.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Layout l && Arrays.equals(header, l.header) && tensors.equals(l.tensors)
                    && fileSize == l.fileSize;
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(header), tensors, fileSize);
        }

        @Override
        public String toString() {
            return "Layout[header " + header.length + " bytes, " + tensors.size() + " tensors, fileSize " + fileSize + "]";
        }
    }

    /**
     * §8.3: orders tensors by dtype descending (U64, I64, F64, C64, F32, U32, I32, BF16, F16, U16,
     * I16, F8_E5M2FNUZ, F8_E4M3FNUZ, F8_E8M0, F8_E4M3, F8_E5M2, I8, U8, F6_E3M2, F6_E2M3, F4, BOOL),
     * then by name (bytewise UTF-8); assigns contiguous offsets in that order; writes
     * {@code __metadata__} first when {@code metadata != null} (its entries sorted bytewise by key, so
     * the bytes never depend on the map's iteration order), then the tensors in data order; compact
     * JSON padded with spaces to a multiple of 8.
     *
     * @param tensors  tensors in any order
     * @param metadata string-to-string metadata, or null for none (then no {@code __metadata__} key)
     * @throws FormatException for duplicate names, null metadata entries, malformed Unicode, sizes
     *                         that overflow, or a header longer than 100_000_000 bytes
     */
    public static Layout layout(List<Spec> tensors, Map<String, String> metadata) {
        List<Spec> sorted = new ArrayList<>(tensors);
        Set<String> names = new HashSet<>();
        for (Spec s : sorted) {
            Objects.requireNonNull(s, "null tensor spec");
            if (!names.add(s.name())) {
                throw new FormatException("duplicate tensor name " + Names.quote(s.name()));
            }
        }
        sorted.sort(DATA_ORDER);
        List<Placed> placed = new ArrayList<>(sorted.size());
        long at = 0;
        for (Spec s : sorted) {
            long end;
            try {
                end = Math.addExact(at, s.byteSize());
            } catch (ArithmeticException e) {
                throw new FormatException("safetensors data buffer size overflows at tensor " + Names.quote(s.name()));
            }
            placed.add(new Placed(s, at, end));
            at = end;
        }
        byte[] header = HeaderJsonWriter.header(sortedMetadata(metadata), placed, SafetensorsHeader.MAX_HEADER_LENGTH);
        long fileSize;
        try {
            fileSize = Math.addExact(header.length, at);
        } catch (ArithmeticException e) {
            throw new FormatException("safetensors file size overflows");
        }
        return new Layout(header, placed, fileSize);
    }

    private static Map<String, String> sortedMetadata(Map<String, String> metadata) {
        if (metadata == null) {
            return null;
        }
        List<Map.Entry<String, String>> entries = new ArrayList<>(metadata.size());
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new FormatException("safetensors metadata contains null");
            }
            if (!Names.isWellFormed(e.getKey()) || !Names.isWellFormed(e.getValue())) {
                throw new FormatException("safetensors metadata entry " + Names.quote(e.getKey()) + " is not valid Unicode");
            }
            entries.add(Map.entry(e.getKey(), e.getValue()));
        }
        entries.sort(Map.Entry.comparingByKey(Names::compareUtf8));
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : entries) {
            out.put(e.getKey(), e.getValue());
        }
        return out;
    }
}
