package dev.modelfs.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Access to the shared test vectors (system property {@code modelfs.vectors}). A missing property or
 * file makes the calling test fail, never skip.
 */
public final class Vectors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Vectors() {
    }

    /** The vectors directory; fails the test if it is not configured or absent. */
    public static Path dir() {
        String p = System.getProperty("modelfs.vectors");
        if (p == null || p.isBlank()) {
            fail("system property modelfs.vectors is not set (run through Maven, fs/pom.xml sets it)");
        }
        Path dir = Path.of(p).toAbsolutePath().normalize();
        if (!Files.isDirectory(dir)) {
            fail("test vectors directory " + dir + " does not exist");
        }
        return dir;
    }

    /** A vector file; fails the test if it is absent. */
    public static Path file(String name) {
        Path f = dir().resolve(name);
        if (!Files.isRegularFile(f)) {
            fail("test vector " + f + " does not exist");
        }
        return f;
    }

    public static byte[] bytes(String name) {
        try {
            return Files.readAllBytes(file(name));
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
