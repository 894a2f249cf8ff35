package dev.modelfs.format.gguf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.HeapCharge;
import dev.modelfs.format.Vectors;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link GgufReader#read(MemorySegment, HeapCharge)}: metadata is charged before it is allocated, and a charge refused stops the parse. */
class GgufReaderChargeTest {
    /** A charge that records every figure and refuses once the sum would pass {@code limit}. */
    private static final class Recording implements HeapCharge {
        final long limit;
        final List<Long> charges = new ArrayList<>();
        long sum;

        Recording(long limit) {
            this.limit = limit;
        }

        @Override
        public void charge(long bytes) {
            charges.add(bytes);
            if (bytes > limit - sum) {
                throw new FormatException("over the test's budget of " + limit + " bytes");
            }
            sum += bytes;
        }
    }

    /** GGUF v3 without tensors: {@code general.architecture} and an array of {@code n} {@code len}-byte tokens. */
    static byte[] vocabulary(int n, int len) {
        byte[] arch = "general.architecture".getBytes(StandardCharsets.UTF_8);
        byte[] key = "tokenizer.ggml.tokens".getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(24 + 8 + arch.length + 4 + 8 + 5 + 8 + key.length + 16 + n * (8 + len)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0x46554747).putInt(3).putLong(0).putLong(2);
        b.putLong(arch.length).put(arch).putInt(8).putLong(5).put("llama".getBytes(StandardCharsets.UTF_8));
        b.putLong(key.length).put(key).putInt(9).putInt(8).putLong(n);
        for (int i = 0; i < n; i++) {
            b.putLong(len);
            for (int j = 0; j < len; j++) {
                b.put((byte) ('a' + (i + j) % 26));
            }
        }
        return b.array();
    }

    @Test
    void aVocabularyOverTheBudgetIsRefusedBeforeItsElementsAreAllocated() {
        int n = 1 << 20;
        Recording budget = new Recording(8 << 20);
        FormatException e = assertThrows(FormatException.class, () -> GgufReader.read(MemorySegment.ofArray(vocabulary(n, 1)), budget));
        assertTrue(e.getMessage().contains("over the test's budget"), e.getMessage());
        assertEquals((long) n * GgufReader.ELEMENT_HEAP, budget.charges.getLast(), "refused on the array's charge up front");
        assertTrue(budget.sum <= budget.limit, "charged " + budget.sum);
        assertTrue(budget.charges.size() < 10, "nothing per element was charged: " + budget.charges.size() + " charges");
    }

    @Test
    void stringsAreChargedTwiceTheirBytesAndTheSameFileParsesWithinAnAmpleBudget() {
        int n = 1000;
        int len = 100;
        byte[] file = vocabulary(n, len);
        Recording ample = new Recording(1L << 40);
        GgufFile g = GgufReader.read(MemorySegment.ofArray(file), ample);
        assertEquals(n, ((GgufArray) g.kvs().get(1).value()).size());
        // independent lower bound: every string's 2 bytes per byte, every element's and KV's object share
        long strings = 2L * n * len + 2L * ("general.architecture".length() + "tokenizer.ggml.tokens".length() + "llama".length());
        long objects = (long) n * GgufReader.ELEMENT_HEAP + 2 * GgufReader.KV_HEAP;
        assertTrue(ample.sum >= strings + objects, "charged " + ample.sum + ", at least " + (strings + objects));
        Recording tight = new Recording(ample.sum - 1);
        assertThrows(FormatException.class, () -> GgufReader.read(MemorySegment.ofArray(file), tight));
        assertTrue(tight.sum < ample.sum);
    }

    @Test
    void aRealFileParsesTheSameWithACharge() throws Exception {
        byte[] file = Files.readAllBytes(Vectors.file("tiny-llama.gguf"));
        Recording r = new Recording(1L << 40);
        GgufFile charged = GgufReader.read(MemorySegment.ofArray(file), r);
        GgufFile plain = GgufReader.read(MemorySegment.ofArray(file));
        assertEquals(plain.kvs().size(), charged.kvs().size());
        assertEquals(plain.tensors().size(), charged.tensors().size());
        long keys = plain.kvs().stream().mapToLong(kv -> GgufReader.KV_HEAP + 2L * kv.key().length()).sum();
        assertTrue(r.sum >= keys, "charged " + r.sum + ", the KVs alone " + keys);
    }
}
