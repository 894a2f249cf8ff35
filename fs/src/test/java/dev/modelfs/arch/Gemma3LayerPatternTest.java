package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Gemma 3's layer pattern, GGUF → Hugging Face (docs/FORMATS.md §7.3): the period llama.cpp's converter writes (every
 * {@code n}-th layer full attention), and the per-layer BOOL array Ollama's converter writes for configs with
 * {@code layer_types} or {@code sliding_window_pattern} (true = sliding window), which a Gemma 3 1B dialect file carries.
 */
class Gemma3LayerPatternTest {
    private static final String P = "gemma3.";
    private static final Gemma3 SPEC = (Gemma3) Architecture.GEMMA3.spec();

    private static Map<String, Object> kvs(Object pattern) {
        Map<String, Object> kv = new HashMap<>(Map.of(P + "block_count", 4L, P + "attention.sliding_window", 16L));
        if (pattern != null) {
            kv.put(P + "attention.sliding_window_pattern", pattern);
        }
        return kv;
    }

    private static ObjectNode config(Map<String, Object> kv) {
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        SPEC.completeHfConfig(c, new MapParams(kv), P, 64, 2, 32);
        return c;
    }

    private static List<String> types(ObjectNode c) {
        List<String> out = new ArrayList<>();
        c.get("layer_types").forEach(t -> out.add(t.asText()));
        return out;
    }

    @Test
    void aPerLayerArrayIsTheLayerTypes() {
        ObjectNode c = config(kvs(new boolean[] {true, false, false, true}));
        assertEquals(List.of("sliding_attention", "full_attention", "full_attention", "sliding_attention"), types(c));
        assertEquals(16, c.get("sliding_window").asInt());
        assertFalse(c.has("sliding_window_pattern"), "no period: the array need not have one");
    }

    @Test
    void aPeriodMakesEveryNthLayerFull() {
        ObjectNode c = config(kvs(2L));
        assertEquals(List.of("sliding_attention", "full_attention", "sliding_attention", "full_attention"), types(c));
        assertEquals(2, c.get("sliding_window_pattern").asInt());
        assertEquals(List.of("sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"), types(config(kvs(null))),
                "the default period 6: none of 4 layers is the 6th");
    }

    @Test
    void anArrayOfAnotherLengthOrANonPositivePeriodIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> config(kvs(new boolean[] {true, false})));
        assertTrue(e.getMessage().contains("2 entries for 4 layers"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> config(kvs(0L)));
    }
}
