package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/** Corrupted vector headers: the reader either accepts them or throws FormatException, nothing else. */
class GgufFuzzPropertiesTest {

    @Provide
    Arbitrary<byte[]> vectors() {
        return Arbitraries.of(GgufVectorsTest.bytes("sampler.gguf"), GgufVectorsTest.bytes("tiny-llama.gguf"));
    }

    /** Only the header part, where corruption matters. */
    private static int headerLength(byte[] file) {
        return (int) GgufVectorsTest.read(file).dataStart();
    }

    private static void readOrFormatException(byte[] b) {
        try {
            GgufReader.read(MemorySegment.ofArray(b));
        } catch (FormatException expected) {
            // fine
        }
    }

    @Property(tries = 3000)
    void randomByteChanges(@ForAll("vectors") byte[] original, @ForAll("positions") List<Integer> positions,
                           @ForAll byte value) {
        byte[] b = original.clone();
        int h = headerLength(b);
        for (int p : positions) {
            b[p % h] = value;
        }
        readOrFormatException(b);
    }

    @Property(tries = 2000)
    void hostileU64s(@ForAll("vectors") byte[] original, @ForAll @IntRange(min = 0, max = 100_000) int position,
                     @ForAll("bigNumbers") long value) {
        byte[] b = original.clone();
        int h = headerLength(b);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putLong(position % (h - 8), value);
        readOrFormatException(b);
    }

    @Property(tries = 1000)
    void zeroedTail(@ForAll("vectors") byte[] original, @ForAll @IntRange(min = 0, max = 100_000) int from) {
        byte[] b = original.clone();
        Arrays.fill(b, from % headerLength(b), b.length, (byte) 0);
        readOrFormatException(b);
    }

    @Provide
    Arbitrary<List<Integer>> positions() {
        return Arbitraries.integers().between(0, 100_000).list().ofMinSize(1).ofMaxSize(6);
    }

    @Provide
    Arbitrary<Long> bigNumbers() {
        return Arbitraries.oneOf(
                Arbitraries.of(-1L, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 32, (1L << 32) - 1, 1L << 40,
                        GgufReader.MAX_STRING_BYTES, GgufReader.MAX_ARRAY_ELEMENTS, 0L, 1L),
                Arbitraries.longs());
    }
}
