package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.ModelName;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A synthesized path's inode is a function of the manifest's bytes and the path: stable across builds, distinct across manifests. */
class ModelContextTest {
    static Manifest manifest(String name, long configSize) {
        byte[] raw = ("{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:"
                + "0".repeat(64) + "\",\"size\":" + configSize + "},\"layers\":[]}").getBytes(StandardCharsets.UTF_8);
        return ManifestParser.parse(ModelName.parse(name).orElseThrow(), raw);
    }

    @Test
    void inodesFollowTheManifestDigestAndThePath() {
        ModelContext a = new ModelContext(null, manifest("a", 0), ModelConfig.EMPTY, 1);
        ModelContext sameBytesOtherTag = new ModelContext(null, manifest("a:other", 0), ModelConfig.EMPTY, 2);
        ModelContext other = new ModelContext(null, manifest("a", 1), ModelConfig.EMPTY, 1);
        assertEquals(a.inodeOf("model.gguf"), sameBytesOtherTag.inodeOf("model.gguf"), "identical manifests share file inodes");
        assertNotEquals(a.inodeOf("model.gguf"), other.inodeOf("model.gguf"));
        assertNotEquals(a.inodeOf("model.gguf"), a.inodeOf("model.fp16.gguf"));
        assertEquals(Inodes.of(a.manifest().digest().hex() + ":x"), a.inodeOf("x"));
    }
}
