package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.ByteSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A directory's listing: computed once even under racing first lookups, then fixed and unmodifiable. */
class DirNodeTest {
    static FileNode file(long inode) {
        return new FileNode(inode, 0, ByteSource.literal(new byte[] {1}), Map.of());
    }

    @Test
    void racingFirstLookupsLoadTheListingOnce() throws InterruptedException {
        AtomicInteger loads = new AtomicInteger();
        DirNode d = new DirNode(7, 5, () -> {
            loads.incrementAndGet();
            SortedMap<String, Node> m = new TreeMap<>();
            m.put("b", file(3));
            m.put("a", file(2));
            return m;
        });
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        List<SortedMap<String, Node>> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 8; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                seen.add(d.children());
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(10_000);
        }
        assertEquals(1, loads.get());
        assertEquals(8, seen.size());
        for (SortedMap<String, Node> m : seen) {
            assertSame(seen.getFirst(), m);
        }
        assertEquals(List.of("a", "b"), List.copyOf(d.children().keySet()));
        assertEquals(2, d.child("a").inode());
        assertNull(d.child("c"));
        assertEquals(7, d.inode());
        assertEquals(5, d.mtimeNanos());
    }

    @Test
    void aListingCannotBeChangedAfterwards() {
        SortedMap<String, Node> m = new TreeMap<>(Map.of("x", file(2)));
        DirNode d = DirNode.of(1, 0, m);
        m.put("y", file(3));
        assertEquals(1, d.children().size(), "the caller's map is copied");
        assertThrows(UnsupportedOperationException.class, () -> d.children().put("z", file(4)));
    }
}
