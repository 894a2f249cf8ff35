package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The fixture store, generated once per test JVM by {@code make_fixture.py} with the real
 * safetensors / gguf / numpy / transformers packages. Expected bytes come from that generator.
 */
final class Fixture {
    private static Path dir;

    private Fixture() {}

    static synchronized Path dir() throws IOException, InterruptedException {
        if (dir == null) {
            Path out = Path.of("target", "fixture").toAbsolutePath();
            deleteTree(out);
            Env.Run r = Env.python(600, "make_fixture.py", out.toString());
            System.out.println(r.output());
            assertEquals(0, r.exit(), "make_fixture.py failed:\n" + r.output());
            dir = out;
        }
        return dir;
    }

    /**
     * A store of its own made by another generator: {@code target/<name>} emptied, then
     * {@code <script> target/<name> <args...>} run with the project's Python, which must succeed.
     */
    static Path generate(String name, String script, long timeoutSeconds, String... args) throws IOException, InterruptedException {
        Path out = Path.of("target", name).toAbsolutePath();
        deleteTree(out);
        String[] all = new String[args.length + 1];
        all[0] = out.toString();
        System.arraycopy(args, 0, all, 1, args.length);
        Env.Run r = Env.python(timeoutSeconds, script, all);
        System.out.println(r.output());
        assertEquals(0, r.exit(), script + " failed:\n" + r.output());
        return out;
    }

    static Path store() throws IOException, InterruptedException {
        return dir().resolve("store");
    }

    /** A private, writable copy of the store (blobs hard-linked) for tests that change it. */
    static Path copyStore(Path target) throws IOException, InterruptedException {
        Path src = store();
        Files.walkFileTree(src, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) throws IOException {
                Files.createDirectories(target.resolve(src.relativize(d).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                Path t = target.resolve(src.relativize(f).toString());
                if (f.startsWith(src.resolve("blobs"))) {
                    Files.createLink(t, f);
                } else {
                    Files.copy(f, t);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return target;
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        Files.walkFileTree(p, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                Files.delete(f);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
