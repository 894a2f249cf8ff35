package dev.modelfs.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Generated fixtures cached by their generator's hash, so that a run whose generators did not change does not make
 * them again (the CONTRIBUTING.md time budget of {@code ./test}). The key is the SHA-256 of the fixture's name, the
 * generator and its arguments, every file of the Python directory (the generators and the libraries they share,
 * {@code requirements.txt} included, so a changed pin makes new fixtures) and the llama.cpp converter the generators
 * run ({@code MODELFS_LLAMA_CPP_SRC}'s {@code convert_hf_to_gguf.py} and gguf-py's writer).
 *
 * <p>Invariants: a cached fixture is used only when its generator finished ({@code .complete} is written last, and the
 * directory is generated under a temporary name and renamed into place); fixtures are read-only for the tests (tests
 * that change a store copy it first: {@link Fixture#copyStore}); older entries of the same name are removed when a new
 * one is made. The cache is {@code $MODELFS_FIXTURE_CACHE}, else {@code ~/.cache/modelfs/fixtures}; setting
 * {@code MODELFS_FIXTURE_CACHE=off} generates into {@code target/} every time, as before.
 */
final class FixtureCache {
    /** Writes the fixture into the directory it is given (which exists and is empty). */
    interface Generator {
        void generate(Path out) throws IOException, InterruptedException;
    }

    private FixtureCache() {}

    /** The fixture {@code name} made by {@code script args}, from the cache or generated now. */
    static Path get(String name, String script, List<String> args, Generator generator) throws IOException, InterruptedException {
        String root = System.getenv().getOrDefault("MODELFS_FIXTURE_CACHE",
                Path.of(System.getProperty("user.home"), ".cache", "modelfs", "fixtures").toString());
        if (root.equals("off")) {
            Path out = Path.of("target", name).toAbsolutePath();
            Fixture.deleteTree(out);
            Files.createDirectories(out);
            generator.generate(out);
            return out;
        }
        Path cache = Path.of(root);
        Path dir = cache.resolve(name + "-" + key(name, script, args).substring(0, 16));
        if (Files.isRegularFile(dir.resolve(".complete"))) {
            System.out.println("fixture " + name + ": cached " + dir);
            return dir;
        }
        Files.createDirectories(cache);
        Path tmp = cache.resolve(dir.getFileName() + ".tmp-" + ProcessHandle.current().pid());
        Fixture.deleteTree(tmp);
        Files.createDirectories(tmp);
        generator.generate(tmp);
        Files.writeString(tmp.resolve(".complete"), script + " " + args + "\n");
        try (Stream<Path> old = Files.list(cache)) {
            for (Path p : old.filter(p -> p.getFileName().toString().startsWith(name + "-") && !p.equals(tmp)
                    && p.getFileName().toString().substring(name.length() + 1).matches("[0-9a-f]{16}")).toList()) {
                Fixture.deleteTree(p);
            }
        }
        Files.move(tmp, dir, StandardCopyOption.ATOMIC_MOVE);
        return dir;
    }

    /** The generator's hash: name, script, arguments, the Python directory and the llama.cpp converter. */
    static String key(String name, String script, List<String> args) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        md.update((name + "\0" + script + "\0" + String.join("\0", args) + "\0").getBytes(StandardCharsets.UTF_8));
        Path py = Env.pythonDir();
        try (Stream<Path> files = Files.walk(py)) {
            for (Path f : files.filter(Files::isRegularFile).filter(p -> !p.toString().contains("__pycache__")).sorted().toList()) {
                md.update(py.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
                md.update(Files.readAllBytes(f));
            }
        }
        String llama = System.getenv().getOrDefault("MODELFS_LLAMA_CPP_SRC",
                py.resolve("../node/node_modules/.llama.cpp-src").normalize().toString());
        {
            for (String f : List.of("convert_hf_to_gguf.py", "gguf-py/gguf/gguf_writer.py", "gguf-py/gguf/constants.py")) {
                Path p = Path.of(llama, f);
                if (Files.isRegularFile(p)) {
                    md.update(Files.readAllBytes(p));
                }
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
