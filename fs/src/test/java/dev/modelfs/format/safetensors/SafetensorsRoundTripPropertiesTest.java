package dev.modelfs.format.safetensors;

import dev.modelfs.format.safetensors.SafetensorsWriter.Layout;
import dev.modelfs.format.safetensors.SafetensorsWriter.Placed;
import dev.modelfs.format.safetensors.SafetensorsWriter.Spec;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.WithNull;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Random tensor specs → writer → parser gives the same names, dtypes, shapes and offsets. */
class SafetensorsRoundTripPropertiesTest {

    @Provide
    Arbitrary<String> names() {
        Arbitrary<Integer> codePoint = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, Arbitraries.integers().between('a', 'z')),
                net.jqwik.api.Tuple.of(2, Arbitraries.of((int) '.', (int) '_', (int) '"', (int) '\\', (int) '/', 0x2581)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 0x1f)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x80, 0xD7FF)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0xE000, 0xFFFF)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x10000, 0x10FFFF)));
        return codePoint.list().ofMaxSize(12).map(cps -> {
            StringBuilder b = new StringBuilder();
            cps.forEach(b::appendCodePoint);
            return b.toString();
        }).filter(s -> !s.equals("__metadata__"));
    }

    @Provide
    Arbitrary<Spec> specs() {
        Arbitrary<long[]> shapes = Arbitraries.longs().between(0, 6).list().ofMaxSize(4)
                .map(l -> l.stream().mapToLong(Long::longValue).toArray());
        return Combinators.combine(names(), Arbitraries.of(Dtype.class), shapes).as((n, d, s) -> {
            try {
                return new Spec(n, d, s);
            } catch (dev.modelfs.format.FormatException e) {
                return null; // sub-byte dtype with a partial byte
            }
        }).filter(s -> s != null);
    }

    @Provide
    Arbitrary<List<Spec>> specLists() {
        return specs().list().ofMaxSize(12).uniqueElements(Spec::name);
    }

    @Provide
    Arbitrary<Map<String, String>> metadata() {
        return Arbitraries.maps(names(), names()).ofMaxSize(4);
    }

    @Property(tries = 300)
    void writerOutputParsesBackIdentically(@ForAll("specLists") List<Spec> specs,
                                           @ForAll("metadata") @WithNull(0.3) Map<String, String> metadata) {
        Layout l = SafetensorsWriter.layout(specs, metadata);
        SafetensorsWriterTest.checkInvariants(l);
        SafetensorsHeader h = SafetensorsWriterTest.reparse(l);
        assertEquals(l.header().length, h.dataStart());
        assertEquals(metadata, h.metadata());
        assertEquals(specs.size(), h.tensors().size());
        // header JSON order is the data order
        assertEquals(l.tensors().stream().map(p -> p.spec().name()).toList(),
                h.tensors().stream().map(TensorEntry::name).toList());
        for (Placed p : l.tensors()) {
            TensorEntry e = h.get(p.spec().name());
            assertEquals(p.spec().dtype(), e.dtype());
            assertArrayEquals(p.spec().shape(), e.shape());
            assertEquals(p.begin(), e.begin());
            assertEquals(p.end(), e.end());
        }
    }

    @Property(tries = 100)
    void layoutDoesNotDependOnInputOrder(@ForAll("specLists") List<Spec> specs, @ForAll long seed) {
        List<Spec> shuffled = new ArrayList<>(specs);
        Collections.shuffle(shuffled, new Random(seed));
        assertEquals(SafetensorsWriter.layout(specs, null), SafetensorsWriter.layout(shuffled, null));
    }
}
