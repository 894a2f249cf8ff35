package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hostile-store corpus (issue 10): {@code make_hostile_store.py} writes a store with good models
 * and more than 50 hostile cases (special files as blobs, links out of the store to root-only files,
 * absurd headers and counts, hostile names, broken manifests) and says what each must look like; a
 * real mount of it must answer each case with its errno and exactly one log line, keep serving the good
 * models byte for byte, and keep its memory bounded. Two more cases change the store while it is read.
 */
class HostileStoreTest {
    /** The mount's chunk cache, part of the memory bound. */
    static final int CACHE_MIB = 256;
    static Path dir;
    static JsonNode spec;

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-hostile", work -> {
        dir = work.resolve("corpus");
        Env.Run r = Env.python(300, "make_hostile_store.py", dir.toString());
        assertEquals(0, r.exit(), "make_hostile_store.py failed:\n" + r.output());
        spec = new ObjectMapper().readTree(dir.resolve("cases.json").toFile());
        assertTrue(spec.get("root").asBoolean(), "the hostile corpus needs root: the escape cases link to root-only files "
                + "and give the store to another owner (run ./test as root, as CI does)");
        return dir.resolve("store");
    }, "--cache-size", CACHE_MIB + "M");

    @Test
    void everyHostileCaseFailsAloneWithItsErrnoAndOneLogLineAndMemoryStaysBounded() throws Exception {
        List<String> failures = new ArrayList<>();
        assertTrue(spec.get("cases").size() >= 50, "the corpus must hold at least 50 cases");
        checkAll(spec.get("good"), "good", failures);
        for (JsonNode cs : spec.get("cases")) {
            checkAll(cs.get("checks"), cs.get("id").asText(), failures);
        }
        checkAll(spec.get("good"), "good after the hostile cases", failures);
        // the log lines of the last cases may reach the file just after their errno: wait until every token is
        // there (or 10 s passed, and the count below names the missing ones), then count
        Poll.within(Duration.ofSeconds(10), () -> {
            String text = mounted.cli().log();
            for (JsonNode cs : spec.get("cases")) {
                for (JsonNode token : cs.get("log")) {
                    if (!text.contains(token.asText())) {
                        return false;
                    }
                }
            }
            return true;
        });
        List<String> log = mounted.cli().log().lines().toList();
        for (JsonNode cs : spec.get("cases")) {
            for (JsonNode token : cs.get("log")) {
                long n = log.stream().filter(l -> l.contains(token.asText())).count();
                if (n != 1) {
                    failures.add(cs.get("id").asText() + ": " + n + " log lines contain '" + token.asText() + "', expected exactly one");
                }
            }
        }
        long rss1 = rssKiB();
        for (int i = 0; i < 2; i++) {
            for (JsonNode cs : spec.get("cases")) {
                checkAll(cs.get("checks"), cs.get("id").asText() + " (again)", failures);
            }
        }
        long rss2 = rssKiB();
        assertTrue(failures.isEmpty(), failures.size() + " failures:\n" + String.join("\n", failures) + "\nmount log:\n" + tail(mounted.cli().log()));
        assertTrue(mounted.cli().process.isAlive(), "the mount died:\n" + tail(mounted.cli().log()));
        System.out.println("hostile corpus: " + spec.get("cases").size() + " cases; mount RssAnon " + rss1 / 1024 + " MiB, after two more rounds "
                + rss2 / 1024 + " MiB");
        assertTrue(rss1 < (512 + CACHE_MIB) * 1024, "mount RSS " + rss1 / 1024 + " MiB after the corpus (bound: 512 MiB + the "
                + CACHE_MIB + " MiB chunk cache)");
        assertTrue(rss2 < rss1 + 128 * 1024, "mount RSS grew from " + rss1 / 1024 + " to " + rss2 / 1024 + " MiB over two rounds");
    }

    void checkAll(JsonNode checks, String id, List<String> failures) {
        for (JsonNode ch : checks) {
            String problem = check(mounted.cli().mountpoint, ch);
            if (problem != null) {
                failures.add(id + ": " + ch.get("path").asText().substring(0, Math.min(80, ch.get("path").asText().length())) + ": " + problem);
            }
        }
    }

    /** Checks one expectation of cases.json against the mount; null when it holds, else what was seen. */
    static String check(Path mp, JsonNode ch) {
        Path p = mp.resolve(ch.get("path").asText());
        String expect = ch.get("expect").asText();
        try {
            switch (expect) {
                case "absent" -> {
                    return Files.exists(p, LinkOption.NOFOLLOW_LINKS) ? "exists, expected absent" : null;
                }
                case "entries" -> {
                    try (Stream<Path> s = Files.list(p)) {
                        long n = s.count();
                        return n == ch.get("count").asLong() ? null : n + " entries, expected " + ch.get("count").asLong();
                    }
                }
                case "ENOENT", "EIO", "EACCES" -> {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                    if (!a.isRegularFile()) {
                        return "not listed as a regular file";
                    }
                    String got = errnoOfReading(p);
                    return got.equals(expect) ? null : "reading gave " + got + ", expected " + expect;
                }
                case "bytes", "readable", "lacks" -> {
                    long size = Files.size(p);
                    byte[] all = readAll(p);
                    if (all.length != size) {
                        return "read " + all.length + " bytes, st_size " + size;
                    }
                    if (expect.equals("bytes")) {
                        String h = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(all));
                        if (all.length != ch.get("size").asLong() || !h.equals(ch.get("sha256").asText())) {
                            return "bytes differ: " + all.length + " bytes sha256 " + h + ", expected " + ch.get("size") + " " + ch.get("sha256");
                        }
                    }
                    if (expect.equals("lacks") && new String(all, StandardCharsets.ISO_8859_1).contains(ch.get("text").asText())) {
                        return "contains '" + ch.get("text").asText() + "'";
                    }
                    return null;
                }
                default -> {
                    return "unknown expectation " + expect;
                }
            }
        } catch (IOException e) {
            return "failed: " + errnoOf(e) + " (" + e + ")";
        } catch (Exception e) {
            return "failed: " + e;
        }
    }

    /**
     * Waits until {@code readers} readers, each with at most one read in flight, have finished (or failed) one more
     * read than they are: at least one read was issued after the blob's last change, so each state of it is read.
     */
    private static void awaitReads(java.util.concurrent.atomic.AtomicInteger ok, java.util.concurrent.atomic.AtomicInteger errors, int readers)
            throws InterruptedException {
        int before = ok.get() + errors.get();
        Poll.until((readers + 1) + " reads", Duration.ofSeconds(30), () -> ok.get() + errors.get() >= before + readers + 1);
    }

    static byte[] readAll(Path p) throws IOException {
        try (FileChannel ch = FileChannel.open(p)) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(1 << 20);
            while (ch.read(b) > 0) {
                out.write(b.array(), 0, b.position());
                b.clear();
            }
            return out.toByteArray();
        }
    }

    /** "OK" if the whole file reads, else the errno name the open or a read failed with. */
    static String errnoOfReading(Path p) {
        try {
            readAll(p);
            return "OK";
        } catch (IOException e) {
            return errnoOf(e);
        }
    }

    static String errnoOf(IOException e) {
        String m = String.valueOf(e.getMessage());
        if (e instanceof NoSuchFileException) {
            return "ENOENT";
        }
        if (e instanceof AccessDeniedException || m.contains("Permission denied")) {
            return "EACCES";
        }
        if (m.contains("Input/output error")) {
            return "EIO";
        }
        if (m.contains("Device or resource busy")) {
            return "EBUSY";
        }
        return e.toString();
    }

    /**
     * The daemon's own resident memory (RssAnon: heap, native chunk cache, stacks), without the pages of
     * mmapped blobs, which are the kernel's shared page cache and count in VmRSS as soon as they are read.
     */
    long rssKiB() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc/" + mounted.cli().process.pid() + "/status"))) {
            if (l.startsWith("RssAnon:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        throw new IOException("no RssAnon for pid " + mounted.cli().process.pid());
    }

    static String tail(String log) {
        return log.length() > 20_000 ? "..." + log.substring(log.length() - 20_000) : log;
    }

    /** An empty store with the folders of model {@code flux}. */
    static Path smallStore(Path root) throws Exception {
        Files.createDirectories(root.resolve("blobs"));
        Files.createDirectories(root.resolve("manifests/registry.ollama.ai/library/flux"));
        return root;
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    static byte[] manifestOf(byte[] blob) throws Exception {
        return ("{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:"
                + sha256(blob) + "\",\"size\":" + blob.length + "}]}").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Null if {@code got} is as long as some version and each of its 4 KiB pages is that page of some
     * version: the kernel keeps one page cache per path, so a descriptor racing a re-pull of its tag may
     * mix versions page by page (docs/SEMANTICS.md, "Open files"), but never shows other bytes.
     */
    static String pagesOfSomeVersion(byte[] got, byte[][] versions) {
        if (java.util.Arrays.stream(versions).noneMatch(v -> v.length == got.length)) {
            return "read " + got.length + " bytes: no version has that size";
        }
        for (int off = 0; off < got.length; off += 4096) {
            int end = Math.min(got.length, off + 4096);
            boolean any = false;
            for (byte[] v : versions) {
                any |= end <= v.length && java.util.Arrays.equals(got, off, end, v, off, end);
            }
            if (!any) {
                return "page at " + off + " of a " + got.length + "-byte read is no version's";
            }
        }
        return null;
    }

    /** The hostile store holds one weight set per folder too (files whose read fails on purpose are skipped). */
    @Test
    void everyFolderHoldsOneWeightSet() throws Exception {
        mounted.cli().requireChecker(300, "check_one_weight_set.py", "--skip-unreadable");
    }

    /**
     * A manifest rewritten 300 times while four readers list, stat and read the model (valid versions
     * with different blobs, truncated JSON, an empty file, in-place and atomic writes): every read gives
     * one version's size with each page of some version, or ENOENT/EIO (EBUSY while another reader holds an
     * older version open with kernel passthrough), never other bytes; the mount survives and serves the last
     * version exactly.
     */
    @Test
    void manifestsChangingWhileReadGiveVersionsPagesOrAnErrnoNeverGarbage(@TempDir Path tmp) throws Exception {
        Path store = smallStore(tmp.resolve("store"));
        byte[][] versions = new byte[3][];
        for (int v = 0; v < versions.length; v++) {
            versions[v] = new byte[256 * 1024 + v * 4096];
            new java.util.Random(v).nextBytes(versions[v]);
            Files.write(store.resolve("blobs/sha256-" + sha256(versions[v])), versions[v]);
        }
        Path manifest = store.resolve("manifests/registry.ollama.ai/library/flux/latest");
        Files.write(manifest, manifestOf(versions[0]));
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"))) {
            Path file = m.mountpoint.resolve("flux/model.gguf");
            MountTreeTest.awaitTrue("model visible", () -> Files.exists(file));
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> bad = new ConcurrentLinkedQueue<>();
            List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        attempts.incrementAndGet();
                        try {
                            try (Stream<Path> s = Files.list(m.mountpoint)) {
                                s.count();
                            }
                            byte[] got = readAll(file);
                            String problem = pagesOfSomeVersion(got, versions);
                            if (problem != null) {
                                bad.add(problem);
                            } else {
                                seen.add(got.length + "");
                            }
                        } catch (IOException e) {
                            String errno = errnoOf(e);
                            // EBUSY: another reader still holds an older version open with kernel passthrough
                            if (!errno.equals("ENOENT") && !errno.equals("EIO") && !errno.equals("EBUSY")) {
                                bad.add("unexpected failure " + e);
                            }
                        }
                    }
                });
                t.start();
                readers.add(t);
            }
            byte[][] junk = {"{\"layers\":[{\"media".getBytes(StandardCharsets.UTF_8), new byte[0], "null".getBytes(StandardCharsets.UTF_8)};
            Path tmpManifest = manifest.resolveSibling(".latest.tmp");   // not a valid tag name: never a manifest itself
            for (int i = 0; i < 300; i++) {
                byte[] next = i % 4 == 3 ? junk[i % junk.length] : manifestOf(versions[i % versions.length]);
                if (i % 2 == 0) {
                    Files.write(manifest, next);                      // in place: truncate, then write
                } else {
                    Files.write(tmpManifest, next);
                    Files.move(tmpManifest, manifest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
                // the readers meet every version: a read begun after this write; after every tenth (a valid manifest),
                // a successful read, so that reads do succeed between the bursts of changes
                int attemptsBefore = attempts.get();                        // counted as a read begins
                int seenBefore = seen.size();
                int write = i;
                Poll.until("a read after manifest write " + i, Duration.ofSeconds(30),
                        () -> attempts.get() > attemptsBefore && (write % 10 != 0 || seen.size() > seenBefore));
            }
            stop.set(true);
            for (Thread t : readers) {
                t.join(60_000);
                assertFalse(t.isAlive(), "a reader hangs");
            }
            assertTrue(bad.isEmpty(), bad.size() + " bad reads, e.g. " + bad.peek() + "\n" + tail(m.log()));
            assertTrue(seen.size() > 20, "too few successful reads: " + seen.size());
            Files.write(manifest, manifestOf(versions[2]));
            MountTreeTest.awaitTrue("last version served", () -> MountTreeTest.sizeOrMinus1(file) == versions[2].length);
            Poll.within(Duration.ofSeconds(10), () -> {                      // an older version's reader may still hold it (EBUSY)
                try {
                    return java.util.Arrays.equals(versions[2], readAll(file));
                } catch (IOException notYet) {
                    return false;
                }
            });
            assertArrayEquals(versions[2], readAll(file));
        }
    }

    /**
     * A 4 MiB blob truncated, deleted and restored while four readers read random ranges of it: every
     * read gives the blob's true bytes or fails with EIO or ENOENT (EBUSY while another reader holds the blob written
     * before open with kernel passthrough), never other bytes.
     */
    @Test
    void blobTruncatedOrDeletedUnderReadersGivesTheTrueBytesOrAnErrno(@TempDir Path tmp) throws Exception {
        Path store = smallStore(tmp.resolve("store"));
        byte[] blob = new byte[4 << 20];
        new java.util.Random(42).nextBytes(blob);
        Path blobFile = store.resolve("blobs/sha256-" + sha256(blob));
        Files.write(blobFile, blob);
        Files.write(store.resolve("manifests/registry.ollama.ai/library/flux/latest"), manifestOf(blob));
        try (CliMount m = CliMount.start(store, tmp.resolve("mnt"))) {
            Path file = m.mountpoint.resolve("flux/model.gguf");
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> bad = new ConcurrentLinkedQueue<>();
            java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger errors = new java.util.concurrent.atomic.AtomicInteger();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                final long seed = r;
                Thread t = new Thread(() -> {
                    java.util.Random rnd = new java.util.Random(seed);
                    while (!stop.get()) {
                        try (FileChannel ch = FileChannel.open(file)) {
                            for (int k = 0; k < 8; k++) {
                                int off = rnd.nextInt(blob.length - 1);
                                ByteBuffer b = ByteBuffer.allocate(Math.min(blob.length - off, 1 + rnd.nextInt(300_000)));
                                int n = ch.read(b, off);
                                for (int i = 0; i < Math.max(0, n); i++) {
                                    if (b.get(i) != blob[off + i]) {
                                        bad.add("byte " + (off + i) + " differs from the blob's");
                                        break;
                                    }
                                }
                                ok.incrementAndGet();
                            }
                        } catch (IOException e) {
                            String errno = errnoOf(e);
                            // EBUSY: the blob was deleted and written again while another reader still holds the old
                            // one open with kernel passthrough (docs/SEMANTICS.md, "Kernel passthrough")
                            if (!errno.equals("ENOENT") && !errno.equals("EIO") && !errno.equals("EBUSY")) {
                                bad.add("unexpected failure " + e);
                            }
                            errors.incrementAndGet();
                        }
                    }
                });
                t.start();
                readers.add(t);
            }
            for (int round = 0; round < 6; round++) {
                awaitReads(ok, errors, readers.size());                          // the whole blob
                try (FileChannel ch = FileChannel.open(blobFile, StandardOpenOption.WRITE)) {
                    ch.truncate(blob.length / (2 + round));
                }
                awaitReads(ok, errors, readers.size());                          // the truncated blob
                Files.delete(blobFile);
                awaitReads(ok, errors, readers.size());                          // no blob
                Files.write(blobFile, blob);
            }
            awaitReads(ok, errors, readers.size());
            stop.set(true);
            for (Thread t : readers) {
                t.join(60_000);
                assertFalse(t.isAlive(), "a reader hangs");
            }
            assertTrue(bad.isEmpty(), bad.size() + " bad reads, e.g. " + bad.peek() + "\n" + tail(m.log()));
            assertTrue(ok.get() > 20, "too few successful reads: " + ok.get() + " (errors " + errors.get() + ")");
            assertArrayEquals(blob, readAll(file), "the restored blob reads whole again");
        }
    }
}
