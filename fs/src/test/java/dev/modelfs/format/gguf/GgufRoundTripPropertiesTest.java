package dev.modelfs.format.gguf;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Random KVs and tensors → {@link GgufWriter} → {@link GgufReader} gives them back exactly. */
class GgufRoundTripPropertiesTest {

    record Kv(String key, GgufValueType type, Object value) {
    }

    record Tensor(String name, long[] ne, GgmlType type) {
    }

    private static Arbitrary<String> text(int maxLength) {
        return Arbitraries.strings().withCharRange('a', 'z').withChars('.', '_', '\u2581', '\u00e9')
                .withCharRange('\u4e00', '\u4e10').ofMaxLength(maxLength);
    }

    private static Arbitrary<Object> scalar(GgufValueType t) {
        return switch (t) {
            case UINT8, INT8 -> Arbitraries.bytes().map(Object.class::cast);
            case UINT16, INT16 -> Arbitraries.shorts().map(Object.class::cast);
            case UINT32, INT32 -> Arbitraries.integers().map(Object.class::cast);
            case UINT64, INT64 -> Arbitraries.longs().map(Object.class::cast);
            case FLOAT32 -> Arbitraries.integers().map(bits -> (Object) Float.intBitsToFloat(bits));
            case FLOAT64 -> Arbitraries.longs().map(bits -> (Object) Double.longBitsToDouble(bits));
            case BOOL -> Arbitraries.of(true, false).map(Object.class::cast);
            case STRING -> text(20).map(Object.class::cast);
            case ARRAY -> throw new IllegalArgumentException();
        };
    }

    private static Arbitrary<Object> value(GgufValueType t) {
        if (t != GgufValueType.ARRAY) {
            return scalar(t);
        }
        return Arbitraries.of(GgufValueType.class).filter(e -> e != GgufValueType.ARRAY)
                .flatMap(e -> scalar(e).list().ofMaxSize(20).map(vs -> (Object) new GgufArray(e, vs)));
    }

    @Provide
    Arbitrary<List<Kv>> kvs() {
        Arbitrary<Kv> kv = Combinators.combine(text(12).filter(s -> !s.isEmpty() && !s.equals(GgufFile.ALIGNMENT_KEY)),
                        Arbitraries.of(GgufValueType.class))
                .flatAs((k, t) -> value(t).map(v -> new Kv(k, t, v)));
        return kv.list().ofMaxSize(10).uniqueElements(Kv::key);
    }

    @Provide
    Arbitrary<List<Tensor>> tensors() {
        Arbitrary<Tensor> t = Combinators.combine(text(10), Arbitraries.of(GgmlType.class),
                        Arbitraries.longs().between(0, 3).list().ofMaxSize(3), Arbitraries.integers().between(0, 3))
                .as((name, type, rest, blocks) -> {
                    long[] ne = new long[1 + rest.size()];
                    ne[0] = (long) blocks * type.blockElements();
                    for (int i = 0; i < rest.size(); i++) {
                        ne[i + 1] = rest.get(i);
                    }
                    return new Tensor(name, ne, type);
                });
        return t.list().ofMaxSize(6).uniqueElements(Tensor::name);
    }

    @Property(tries = 300)
    void writeThenRead(@ForAll("kvs") List<Kv> kvs, @ForAll("tensors") List<Tensor> tensors,
                       @ForAll("alignments") int alignment) {
        List<Kv> all = new ArrayList<>(kvs);
        if (alignment != 32) {
            all.add(new Kv(GgufFile.ALIGNMENT_KEY, GgufValueType.UINT32, alignment));
        }
        List<Long> sizes = new ArrayList<>();
        for (Tensor t : tensors) {
            sizes.add(new GgufTensorInfo(t.name(), t.ne(), t.type(), 0).byteSize());
        }
        long[] offsets = GgufWriter.tensorOffsets(sizes, alignment);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(GgufWriter.preamble(3, tensors.size(), all.size()));
        List<long[]> ranges = new ArrayList<>();
        for (Kv kv : all) {
            byte[] b = GgufWriter.encodeKv(kv.key(), kv.type(), kv.value());
            ranges.add(new long[]{out.size(), b.length});
            out.writeBytes(b);
        }
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            out.writeBytes(GgufWriter.encodeTensorInfo(t.name(), t.ne(), t.type(), offsets[i]));
        }
        long dataStart = GgufWriter.align(out.size(), alignment);
        long dataLen = tensors.isEmpty() ? 0 : offsets[offsets.length - 1] + sizes.getLast();
        out.writeBytes(new byte[(int) (dataStart - out.size() + dataLen)]);

        byte[] file = out.toByteArray();
        GgufFile f = GgufReader.read(MemorySegment.ofArray(file));
        assertEquals(alignment, f.alignment());
        assertEquals(dataStart, f.dataStart());
        assertEquals(all.size(), f.kvs().size());
        for (int i = 0; i < all.size(); i++) {
            Kv kv = all.get(i);
            GgufKv got = f.kvs().get(i);
            assertEquals(new GgufKv(kv.key(), kv.type(), kv.value(), ranges.get(i)[0], ranges.get(i)[1]), got);
            // bit-exact, including NaN payloads that Float/Double.equals would not distinguish
            assertArrayEquals(Arrays.copyOfRange(file, (int) got.rawOffset(), (int) (got.rawOffset() + got.rawLength())),
                    GgufWriter.encodeKv(got.key(), got.type(), got.value()));
        }
        assertEquals(tensors.size(), f.tensors().size());
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            GgufTensorInfo got = f.tensors().get(i);
            assertEquals(t.name(), got.name());
            assertArrayEquals(t.ne(), got.ne());
            assertEquals(t.type(), got.type());
            assertEquals(offsets[i], got.offset());
        }
    }

    @Provide
    Arbitrary<Integer> alignments() {
        return Arbitraries.of(1, 8, 16, 32, 64, 4096);
    }
}
