package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture cache's key ({@link FixtureCache#key}): a llama.cpp source directory named as a generator argument counts
 * by its converter's bytes, not by its path (two checkouts share fixtures), and a changed converter or another argument
 * is another key.
 */
class FixtureCacheTest {
    @TempDir
    Path a;
    @TempDir
    Path b;

    private static Path llamaSource(Path dir, String converter) throws Exception {
        Files.createDirectories(dir.resolve("gguf-py/gguf"));
        Files.writeString(dir.resolve("convert_hf_to_gguf.py"), converter);
        Files.writeString(dir.resolve("gguf-py/gguf/gguf_writer.py"), "writer");
        Files.writeString(dir.resolve("gguf-py/gguf/constants.py"), "constants");
        return dir;
    }

    @Test
    void aLlamaCppSourceCountsByItsConverterNotItsPath() throws Exception {
        String one = FixtureCache.key("gguf-fixture", "make_gguf_fixture.py",
                List.of(llamaSource(a.resolve("clone-1/llama"), "converter v1").toString()));
        String two = FixtureCache.key("gguf-fixture", "make_gguf_fixture.py",
                List.of(llamaSource(b.resolve("clone-2/llama"), "converter v1").toString()));
        assertEquals(one, two, "the same converter in another checkout");

        String changed = FixtureCache.key("gguf-fixture", "make_gguf_fixture.py",
                List.of(llamaSource(b.resolve("clone-3/llama"), "converter v2").toString()));
        assertNotEquals(one, changed, "another converter, another fixture");
        assertNotEquals(one, FixtureCache.key("gguf-fixture", "make_gguf_fixture.py",
                List.of(a.resolve("clone-1/llama").toString(), "--more")), "another argument, another fixture");
    }
}
