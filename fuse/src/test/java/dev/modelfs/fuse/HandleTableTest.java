package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HandleTableTest {
    @Test
    void handlesAreUniqueWhileOpenAndReusedAfterRemove() {
        HandleTable<String> t = new HandleTable<>();
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            long h = t.add("v" + i);
            assertEquals(true, h > 0 && seen.add(h), "fresh handle " + h);
            assertEquals("v" + i, t.get(h));
        }
        assertEquals(200, t.size());
        long h = seen.iterator().next();
        String v = t.get(h);
        assertEquals(v, t.remove(h));
        assertNull(t.get(h));
        assertNull(t.remove(h));
        assertEquals(h, t.add("again"), "freed numbers are reused");
        assertNull(t.get(0));
        assertNull(t.get(-1));
        assertNull(t.get(1_000_000));
    }
}
