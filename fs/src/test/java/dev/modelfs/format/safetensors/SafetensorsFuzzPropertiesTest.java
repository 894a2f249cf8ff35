package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.MemorySegment;
import java.util.HexFormat;
import java.util.List;

/** Mutated and truncated vector files: the parser either accepts them or throws FormatException. */
class SafetensorsFuzzPropertiesTest {

    @Provide
    Arbitrary<byte[]> vectorFiles() {
        List<byte[]> files = SafetensorsVectorsTest.cases().stream()
                .map(c -> HexFormat.of().parseHex(c.get("hex").asText())).toList();
        return Arbitraries.of(files);
    }

    private static void parseOrFormatException(byte[] bytes) {
        try {
            SafetensorsParser.parse(MemorySegment.ofArray(bytes));
        } catch (FormatException expected) {
            // fine
        }
    }

    @Property(tries = 2000)
    void mutatedBytes(@ForAll("vectorFiles") byte[] original, @ForAll("positions") List<Integer> positions,
                      @ForAll byte value) {
        byte[] b = original.clone();
        for (int p : positions) {
            b[p % b.length] = value;
        }
        parseOrFormatException(b);
    }

    @Property(tries = 500)
    void truncated(@ForAll("vectorFiles") byte[] original, @ForAll int cut) {
        parseOrFormatException(java.util.Arrays.copyOf(original, Math.floorMod(cut, original.length + 1)));
    }

    @Provide
    Arbitrary<List<Integer>> positions() {
        return Arbitraries.integers().between(0, 1000).list().ofMinSize(1).ofMaxSize(4);
    }

}
