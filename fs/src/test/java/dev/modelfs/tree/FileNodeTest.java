package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A file's size is its source's, and its extended attributes are a fixed copy. */
class FileNodeTest {
    @Test
    void sizeIsTheSourcesAndAttributesAreCopied() {
        Map<String, String> xattrs = new HashMap<>(Map.of("user.modelfs.source", "test"));
        FileNode f = new FileNode(9, 1, ByteSource.of(new Segment.Literal(new byte[3]), new Segment.Zeros(4)), xattrs);
        xattrs.put("user.other", "x");
        assertEquals(7, f.size());
        assertEquals(Map.of("user.modelfs.source", "test"), f.xattrs());
        assertThrows(UnsupportedOperationException.class, () -> f.xattrs().put("a", "b"));
    }
}
