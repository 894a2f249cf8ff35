package dev.modelfs.it;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * A reference-model test in the style of mountpoint-s3's reftests: jqwik generates sequences of store
 * operations (pull, re-pull a tag with new content, remove, write a broken manifest, delete or truncate
 * a blob) and of reads through the mount (open, read, close), applies each to a real store under a real
 * mount and to the small model of this class, and after every step requires them to agree: the names
 * in the root, the sizes and manifest bytes of every model, the bytes read from handles opened before
 * and after each change, and every errno.
 *
 * <p>The mount runs with zero kernel timeouts (names and attributes are asked again every time), and
 * each read first drops the file's page cache ({@link PageCache#drop}): the kernel keeps one page cache
 * per path, shared by handles opened on different versions, which is documented behavior, not modelfs's.
 * Every {@code model.gguf} is one whole blob, which the kernel's FUSE passthrough reads (this machine's kernel, as
 * root): a handle whose blob was truncated after it was opened reads the blob file as it is now (its bytes up to the
 * truncation, then end of file), and while a handle holds one blob file, an open of its path that would read another
 * is EBUSY (docs/SEMANTICS.md "Kernel passthrough").
 */
class TreeReferenceModelTest {
    static final int MODELS = 3;
    static final int[] SIZES = {1, 4096, 5000, 65536, 131077, 300000};
    static Path store;

    sealed interface Op permits Pull, Remove, Break, DeleteBlob, Truncate, Open, Read, Close {}
    /** Pulls content {@code seed} under tag {@code model} (a re-pull when the tag exists). */
    record Pull(int model, int seed) implements Op {}
    /** {@code ollama rm}: the manifest goes, and its blob too if no other manifest uses it. */
    record Remove(int model) implements Op {}
    record Break(int model) implements Op {}
    record DeleteBlob(int model) implements Op {}
    /** Truncates the model's blob in place to {@code eighths}/8 of its size. */
    record Truncate(int model, int eighths) implements Op {}
    record Open(int model) implements Op {}
    record Read(int handle, int permille, int length) implements Op {}
    record Close(int handle) implements Op {}

    /** The model of one blob file: its content, which file generation is at its path now, and truncations per generation. */
    static final class Blob {
        final byte[] bytes;
        boolean present;
        int gen;
        final Map<Integer, Long> truncatedTo = new HashMap<>();

        Blob(byte[] bytes) {
            this.bytes = bytes;
        }

        boolean intact() {
            return present && !truncatedTo.containsKey(gen);
        }
    }

    /** An open descriptor: what it opened (content, blob and generation). */
    record Handle(int fd, String path, byte[] bytes, String hex, int gen) {}

    final Map<String, Blob> blobs = new HashMap<>();
    final String[] manifests = new String[MODELS];        // hex of the model's blob, "BROKEN", or null
    final byte[][] manifestBytes = new byte[MODELS][];
    final List<Handle> handles = new ArrayList<>();
    final List<String> log = new ArrayList<>();
    static final String BROKEN = "BROKEN";

    /** An empty store, mounted without kernel caching of attributes and entries (jqwik drives the life cycle). */
    static final MountedStore mounted = MountedStore.of("modelfs-reftest", work -> {
        store = work.resolve("store");
        Files.createDirectories(store.resolve("blobs"));
        Files.createDirectories(store.resolve("manifests/registry.ollama.ai/library"));
        return store;
    }, "-o", "attr_timeout=0,entry_timeout=0,negative_timeout=0");

    @BeforeContainer
    static void mountEmptyStore() throws Exception {
        mounted.start();
    }

    @AfterContainer
    static void unmount() throws Exception {
        mounted.stop();
    }

    @BeforeTry
    void emptyStoreAndModel() throws Exception {
        blobs.clear();
        Arrays.fill(manifests, null);
        Arrays.fill(manifestBytes, null);
        log.clear();
        try (Stream<Path> s = Files.list(store.resolve("manifests/registry.ollama.ai/library"))) {
            for (Path p : s.toList()) {
                Fixture.deleteTree(p);
            }
        }
        try (Stream<Path> s = Files.list(store.resolve("blobs"))) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
        awaitTree();
    }

    @AfterTry
    void closeHandles() {
        handles.forEach(h -> PageCache.close(h.fd()));
        handles.clear();
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Integer> model = Arbitraries.integers().between(0, MODELS - 1);
        Arbitrary<Integer> handle = Arbitraries.integers().between(0, 3);
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                Tuple.of(5, Combinators.combine(model, Arbitraries.integers().between(0, SIZES.length - 1)).as(Pull::new)),
                Tuple.of(1, model.map(Remove::new)),
                Tuple.of(1, model.map(Break::new)),
                Tuple.of(1, model.map(DeleteBlob::new)),
                Tuple.of(2, Combinators.combine(model, Arbitraries.integers().between(0, 7)).as(Truncate::new)),
                Tuple.of(4, model.map(Open::new)),
                Tuple.of(5, Combinators.combine(handle, Arbitraries.integers().between(0, 999),
                        Arbitraries.integers().between(1, 200_000)).as(Read::new)),
                Tuple.of(1, handle.map(Close::new)));
        return op.list().ofMinSize(3).ofMaxSize(16);
    }

    @Property(tries = 25, shrinking = ShrinkingMode.BOUNDED)
    void theMountAgreesWithTheModelAfterEveryStep(@ForAll("operations") List<Op> ops) throws Exception {
        for (Op op : ops) {
            log.add(op.toString());
            String problem = apply(op);
            if (problem == null && !(op instanceof Read) && !(op instanceof Close)) {
                problem = awaitTree();
            }
            if (problem != null) {
                throw new AssertionError("after " + String.join(", ", log) + ": " + problem + "\nmount log:\n" + HostileStoreTest.tail(mounted.cli().log()));
            }
        }
        for (int i = 0; i < handles.size(); i++) {        // every open handle still reads what it opened, whole
            String problem = apply(new Read(i, 0, handles.get(i).bytes().length));
            if (problem != null) {
                throw new AssertionError("after " + String.join(", ", log) + ": final read: " + problem);
            }
        }
    }

    static byte[] content(int seed) {
        byte[] b = new byte[SIZES[seed]];
        new Random(seed * 31L + 7).nextBytes(b);
        return b;
    }

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    static String name(int model) {
        return "m" + model;
    }

    Path blobPath(String hex) {
        return store.resolve("blobs/sha256-" + hex);
    }

    Path manifestPath(int model) {
        return store.resolve("manifests/registry.ollama.ai/library/" + name(model) + "/latest");
    }

    /** Writes like Ollama does: a temporary file renamed over the target (a new inode). */
    static void writeAtomically(Path target, byte[] data) throws IOException {
        Files.createDirectories(target.getParent());
        Path tmp = target.resolveSibling(".tmp-" + target.getFileName());
        Files.write(tmp, data);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Applies one operation to the store (or reads through the mount) and to the model; a disagreement, or null. */
    String apply(Op op) throws Exception {
        switch (op) {
            case Pull(int m, int seed) -> {
                byte[] bytes = content(seed);
                String hex = sha256(bytes);
                Blob b = blobs.computeIfAbsent(hex, h -> new Blob(bytes));
                if (!b.intact()) {
                    writeAtomically(blobPath(hex), bytes);
                    b.present = true;
                    b.gen++;
                }
                byte[] manifest = ("{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:"
                        + hex + "\",\"size\":" + bytes.length + "}]}").getBytes(StandardCharsets.UTF_8);
                writeAtomically(manifestPath(m), manifest);
                manifests[m] = hex;
                manifestBytes[m] = manifest;
            }
            case Remove(int m) -> {
                if (manifests[m] != null) {
                    Files.delete(manifestPath(m));
                    String hex = manifests[m];
                    manifests[m] = null;
                    if (!hex.equals(BROKEN) && Arrays.stream(manifests).noneMatch(hex::equals) && blobs.get(hex).present) {
                        Files.delete(blobPath(hex));
                        blobs.get(hex).present = false;
                    }
                }
            }
            case Break(int m) -> {
                writeAtomically(manifestPath(m), "{\"layers\":[{\"mediaType\":".getBytes(StandardCharsets.UTF_8));
                manifests[m] = BROKEN;
            }
            case DeleteBlob(int m) -> {
                Blob b = manifests[m] == null || manifests[m].equals(BROKEN) ? null : blobs.get(manifests[m]);
                if (b != null && b.present) {
                    Files.delete(blobPath(manifests[m]));
                    b.present = false;
                }
            }
            case Truncate(int m, int eighths) -> {
                Blob b = manifests[m] == null || manifests[m].equals(BROKEN) ? null : blobs.get(manifests[m]);
                if (b != null && b.present) {
                    long len = Math.min(b.truncatedTo.getOrDefault(b.gen, (long) b.bytes.length), (long) b.bytes.length * eighths / 8);
                    try (FileChannel ch = FileChannel.open(blobPath(manifests[m]), StandardOpenOption.WRITE)) {
                        ch.truncate(len);
                    }
                    b.truncatedTo.put(b.gen, len);
                }
            }
            case Open(int m) -> {
                String path = name(m) + "/model.gguf";
                String hex = manifests[m];
                Blob b = hex == null || hex.equals(BROKEN) ? null : blobs.get(hex);
                // kernel passthrough: one blob file per open path, so while a handle of this path holds another blob file
                // (another digest, or the same blob deleted and written again), a new open is EBUSY
                boolean busy = b != null && handles.stream().anyMatch(h -> h.path().equals(path)
                        && !(h.hex().equals(hex) && h.gen() == b.gen));
                int expected = b == null || !b.present ? PageCache.ENOENT : !b.intact() ? PageCache.EIO
                        : busy ? PageCache.EBUSY : 0;
                int fd = PageCache.open(mounted.cli().mountpoint.resolve(path));
                int got = fd >= 0 ? 0 : -fd;
                if (fd >= 0) {
                    handles.add(new Handle(fd, path, b == null ? new byte[0] : b.bytes, hex, b == null ? -1 : b.gen));
                }
                if (got != expected) {
                    return "open " + path + " gave " + PageCache.name(got) + ", the model says " + PageCache.name(expected);
                }
            }
            case Read(int i, int permille, int length) -> {
                if (handles.isEmpty()) {
                    return null;
                }
                Handle h = handles.get(i % handles.size());
                long off = (long) h.bytes().length * permille / 1000;
                PageCache.drop(h.fd());
                int[] errno = new int[1];
                byte[] got = PageCache.pread(h.fd(), off, length, errno);
                byte[] want = Arrays.copyOfRange(h.bytes(), (int) off, (int) Math.min(h.bytes().length, off + length));
                Long truncated = blobs.get(h.hex()).truncatedTo.get(h.gen());
                String what = "read " + h.path() + " [" + off + ", +" + length + ") of a handle on " + h.hex().substring(0, 8) + " gen " + h.gen();
                if (truncated != null) {            // kernel passthrough reads the blob file as it is now: ends at the truncation
                    byte[] clipped = Arrays.copyOf(want, (int) Math.max(0, Math.min(want.length, truncated - off)));
                    return got != null && Arrays.equals(got, clipped) ? null
                            : what + " of a blob truncated at " + truncated + " gave " + (got == null ? PageCache.name(errno[0]) : got.length + " bytes")
                            + ", the model says the " + clipped.length + " bytes before the truncation";
                }
                if (got == null) {
                    return what + " failed with " + PageCache.name(errno[0]) + ", the model says bytes";
                }
                if (!Arrays.equals(got, want)) {
                    return what + " gave " + got.length + " bytes that differ from the " + want.length + " the handle opened";
                }
            }
            case Close(int i) -> {
                if (!handles.isEmpty()) {
                    PageCache.close(handles.remove(i % handles.size()).fd());
                }
            }
        }
        return null;
    }

    /** Waits up to 3 s (the 250 ms rescan) for the root and every model to look as the model says; the last disagreement, or null. */
    String awaitTree() throws InterruptedException {
        String[] problem = {null};
        Poll.within(Duration.ofSeconds(3), () -> (problem[0] = treeProblem()) == null);
        return problem[0];
    }

    String treeProblem() {
        Set<String> want = new TreeSet<>();
        for (int m = 0; m < MODELS; m++) {
            if (manifests[m] != null && !manifests[m].equals(BROKEN)) {
                want.add(name(m));
            }
        }
        try (Stream<Path> s = Files.list(mounted.cli().mountpoint)) {
            Set<String> got = s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
            if (!got.equals(want)) {
                return "root lists " + got + ", the model says " + want;
            }
            for (String n : want) {
                int m = Integer.parseInt(n.substring(1));
                long size = Files.size(mounted.cli().mountpoint.resolve(n + "/model.gguf"));
                if (size != blobs.get(manifests[m]).bytes.length) {
                    return n + "/model.gguf has size " + size + ", the model says " + blobs.get(manifests[m]).bytes.length;
                }
                byte[] mf = Files.readAllBytes(mounted.cli().mountpoint.resolve(n + "/ollama/manifest.json"));
                if (!Arrays.equals(mf, manifestBytes[m])) {
                    return n + "/ollama/manifest.json is not the manifest written: " + new String(mf, StandardCharsets.UTF_8);
                }
                new ObjectMapper().readTree(mf);
            }
            return null;
        } catch (IOException e) {
            return "listing the mount failed: " + e;
        }
    }
}
