package dev.modelfs.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * run ({@code convert_hf_to_gguf.py} and gguf-py's writer, from the llama.cpp source an argument names, else
 * {@code MODELFS_LLAMA_CPP_SRC}'s). An argument naming a llama.cpp source directory counts by that converter, not by its
 * path, so that checkouts in other folders share the cache (an absolute path in the key made each clone generate the
 * GGUF and dialect fixtures again, and remove the other's).
 *
 * <p>Invariants: a cached fixture is used only when its generator finished ({@code .complete} is written last; a
 * directory without it is a generator that died, deleted and made again); it is generated where it stays, so paths a
 * generator writes into it remain true; fixtures are read-only for the tests (tests
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
        try (Stream<Path> old = Files.list(cache)) {        // other versions of this fixture, and a generator that died
            for (Path p : old.filter(p -> p.getFileName().toString().startsWith(name + "-")
                    && p.getFileName().toString().substring(name.length() + 1).matches("[0-9a-f]{16}")).toList()) {
                Fixture.deleteTree(p);
            }
        }
        Files.createDirectories(dir);                          // generated in place: paths a generator writes stay true
        generator.generate(dir);
        Files.writeString(dir.resolve(".complete"), script + " " + args + "\n");
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
        String llama = System.getenv().getOrDefault("MODELFS_LLAMA_CPP_SRC",
                Env.pythonDir().resolve("../node/node_modules/.llama.cpp-src").normalize().toString());
        StringBuilder named = new StringBuilder(name + "\0" + script + "\0");
        for (String a : args) {
            if (isLlamaCppSource(a)) {                 // hashed by its converter below, not by where the checkout is
                llama = a;
                a = "<llama.cpp source>";
            }
            named.append(a).append('\0');
        }
        md.update(named.toString().getBytes(StandardCharsets.UTF_8));
        Path py = Env.pythonDir();
        try (Stream<Path> files = Files.walk(py)) {
            for (Path f : files.filter(Files::isRegularFile).filter(p -> !p.toString().contains("__pycache__")).sorted().toList()) {
                md.update(py.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
                md.update(Files.readAllBytes(f));
            }
        }
        for (String f : List.of("convert_hf_to_gguf.py", "gguf-py/gguf/gguf_writer.py", "gguf-py/gguf/constants.py")) {
            Path p = Path.of(llama, f);
            if (Files.isRegularFile(p)) {
                md.update(Files.readAllBytes(p));
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** Whether the generator argument {@code a} is a llama.cpp source directory (it holds {@code convert_hf_to_gguf.py}). */
    private static boolean isLlamaCppSource(String a) {
        try {
            return Files.isRegularFile(Path.of(a, "convert_hf_to_gguf.py"));
        } catch (java.nio.file.InvalidPathException e) {
            return false;
        }
    }
}
