package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A synthesized file's node: its inode from the manifest digest and path (ModelContext.inodeOf), the model's mtime, its source xattr. */
class ViewFilesTest {
    @Test
    void placesTheFileWithItsIdentity() {
        byte[] raw = ("{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:"
                + "0".repeat(64) + "\",\"size\":0},\"layers\":[]}").getBytes(StandardCharsets.UTF_8);
        Manifest m = ManifestParser.parse(ModelName.parse("m").orElseThrow(), raw);
        ModelContext ctx = new ModelContext(null, m, ModelConfig.EMPTY, 42);
        TreeBuilder tree = new TreeBuilder("t", 42);
        ViewFiles.put(ctx, tree, "a/b.txt", ByteSource.literal(new byte[] {1}), "why");
        DirNode a = assertInstanceOf(DirNode.class, tree.build().get("a"));
        FileNode f = assertInstanceOf(FileNode.class, a.child("b.txt"));
        Digest d = m.digest();
        assertEquals(Inodes.of(d.hex() + ":a/b.txt"), f.inode());
        assertEquals(ctx.inodeOf("a/b.txt"), f.inode());
        assertNotEquals(ctx.inodeOf("a/c.txt"), f.inode());
        assertEquals(42, f.mtimeNanos());
        assertEquals(Map.of("user.modelfs.source", "why"), f.xattrs());
    }
}
