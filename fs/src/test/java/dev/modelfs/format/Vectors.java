package dev.modelfs.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The one way tests reach the test vectors: the {@code vectors/} folder of the test resources
 * ({@code fs/src/test/resources/vectors}, described by its README and docs/FORMATS.md §10), found on
 * the test class path. A missing folder or file makes the calling test fail, never skip.
 */
public final class Vectors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Vectors() {
    }

    /** The vectors directory; fails the test if it is not configured or absent. */
    public static Path dir() {
        java.net.URL readme = Vectors.class.getResource("/vectors/README.md");
        if (readme == null) {
            return fail("test vectors are not on the class path (fs/src/test/resources/vectors)");
        }
        try {
            return Path.of(readme.toURI()).getParent();
        } catch (java.net.URISyntaxException e) {
            return fail("test vectors at an unusable location " + readme, e);
        }
    }

    /** A vector file; fails the test if it is absent. */
    public static Path file(String name) {
        Path f = dir().resolve(name);
        if (!Files.isRegularFile(f)) {
            fail("test vector " + f + " does not exist");
        }
        return f;
    }

    /**
     * A vector file's bytes, read from the class path as a stream: also when the vectors are inside a jar (fs's test jar,
     * as modules that depend on it see them in a full build), where {@link #file} has no path.
     */
    public static byte[] bytes(String name) {
        try (java.io.InputStream in = Vectors.class.getResourceAsStream("/vectors/" + name)) {
            if (in == null) {
                return fail("test vector " + name + " is not on the class path (fs/src/test/resources/vectors)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static JsonNode json(String name) {
        try {
            return JSON.readTree(file(name).toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
