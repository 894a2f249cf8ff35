package dev.modelfs.format.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.HeapCharge;
import dev.modelfs.format.Vectors;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The page-in hook of {@link GgufReader#read(MemorySegment, HeapCharge, java.util.function.LongConsumer, long)}: asked
 * before any byte past what is resident is read, in increasing offsets within the file, never for what is resident,
 * and the header parsed is the same as without it.
 */
class GgufReaderPageInTest {
    @Test
    void theHookIsAskedAheadOfEveryByteReadPastWhatIsResident() {
        MemorySegment file = MemorySegment.ofArray(Vectors.bytes("tiny-llama.gguf"));
        GgufFile plain = GgufReader.read(file);
        List<Long> asked = new ArrayList<>();
        GgufFile hooked = GgufReader.read(file, HeapCharge.NONE, asked::add, 0);
        assertEquals(plain.tensors(), hooked.tensors());
        assertEquals(plain.kvs().size(), hooked.kvs().size());
        assertTrue(!asked.isEmpty(), "asked before the first byte");
        for (int i = 0; i < asked.size(); i++) {
            assertTrue(asked.get(i) <= file.byteSize(), "within the file: " + asked);
            assertTrue(i == 0 || asked.get(i) > asked.get(i - 1), "increasing: " + asked);
        }
        assertTrue(asked.getLast() >= plain.dataStart() - plain.alignment(),
                "asked up to where the parse read: " + asked + ", data at " + plain.dataStart());

        List<Long> none = new ArrayList<>();
        GgufReader.read(file, HeapCharge.NONE, none::add, file.byteSize());
        assertEquals(List.of(), none, "nothing asked for what is resident");
    }
}
