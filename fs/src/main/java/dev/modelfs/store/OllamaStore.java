package dev.modelfs.store;

import dev.modelfs.cache.NativeFile;
import dev.modelfs.cache.UntrustedFileException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * An Ollama model store on disk: {@code manifests/<host>/<ns>/<model>/<tag>} plus {@code blobs/}.
 *
 * <p>Invariants: the store is never written; only regular files exactly four levels below
 * {@code manifests/} whose components are valid name parts are manifests (docs/FORMATS.md §1.2); a blob
 * path is only ever built from a validated {@link Digest}, so it always lies inside {@code blobs/}, and
 * blobs are only read through {@link #openBlob}, which refuses what could lead out of the store.
 */
public final class OllamaStore {
    private static final Logger LOG = Logger.getLogger(OllamaStore.class.getName());

    private final Path root;
    /** Invalid manifest paths already reported: the store is rescanned every few hundred ms. */
    private final java.util.Set<Path> reported = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public OllamaStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    /** {@code --store} if given, else {@code $OLLAMA_MODELS} (trimmed, unquoted), else {@code ~/.ollama/models}. */
    public static Path resolveRoot(Optional<Path> explicit, Map<String, String> env) {
        if (explicit.isPresent()) {
            return explicit.get();
        }
        String v = env.get("OLLAMA_MODELS");
        if (v != null) {
            v = v.trim();
            while (v.length() >= 2 && (v.charAt(0) == '"' || v.charAt(0) == '\'')
                    && v.charAt(v.length() - 1) == v.charAt(0)) {
                v = v.substring(1, v.length() - 1);
            }
            if (!v.isEmpty()) {
                return Path.of(v);
            }
        }
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        return Path.of(home, ".ollama", "models");
    }

    public Path root() {
        return root;
    }

    public Path manifestsDir() {
        return root.resolve("manifests");
    }

    public Path blobsDir() {
        return root.resolve("blobs");
    }

    /** Every manifest currently in the store, sorted by manifest path; invalid entries logged and skipped. */
    public List<ManifestRef> listManifests() {
        List<ManifestRef> out = new ArrayList<>();
        walk(manifestsDir(), new String[4], 0, out);
        out.sort(Comparator.comparing(r -> r.name().manifestPath()));
        return out;
    }

    private void walk(Path dir, String[] parts, int depth, List<ManifestRef> out) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                parts[depth] = p.getFileName().toString();
                BasicFileAttributes a;
                try {
                    a = Files.readAttributes(p, BasicFileAttributes.class);
                } catch (IOException e) {
                    continue;
                }
                if (depth < 3) {
                    if (a.isDirectory()) {
                        walk(p, parts, depth + 1, out);
                    }
                } else if (a.isRegularFile()) {
                    Optional<ModelName> name = ModelName.fromParts(parts[0], parts[1], parts[2], parts[3]);
                    if (name.isEmpty()) {
                        if (reported.size() < 10_000 && reported.add(p)) {
                            LOG.warning("skipping manifest with an invalid name: " + root.relativize(p));
                        }
                        continue;
                    }
                    out.add(new ManifestRef(name.get(), p, a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS),
                            a.size(), a.fileKey()));
                }
            }
        } catch (IOException e) {
            if (depth > 0 || Files.exists(dir)) {
                LOG.warning("cannot list " + dir + ": " + e.getMessage());
            }
        }
    }

    /**
     * Reads a manifest's bytes, refusing absurd sizes, through the trusted open: only a regular file,
     * and one that resolves outside {@code manifests/} or has other hard links only when the owner of
     * {@code manifests/} owns it.
     */
    public byte[] readManifest(ManifestRef ref) throws IOException {
        Path within = manifestsDir().toRealPath();
        long owner = ((Number) Files.getAttribute(within, "unix:uid")).longValue();
        try (NativeFile f = NativeFile.openRegular(ref.file(), within, owner)) {
            return readWhole(f, ManifestParser.MAX_MANIFEST_BYTES, "manifest");
        }
    }

    /**
     * The blob file for a digest: {@code sha256-<hex>}, else legacy {@code sha256:<hex>}; empty if neither is
     * a regular file. For naming only: blobs are read through {@link #openBlob}, which applies the trust rules.
     */
    public Optional<Path> blobPath(Digest d) {
        Path p = blobsDir().resolve(d.fileName());
        if (Files.isRegularFile(p)) {
            return Optional.of(p);
        }
        Path legacy = blobsDir().resolve(d.legacyFileName());
        if (Files.isRegularFile(legacy)) {
            return Optional.of(legacy);
        }
        return Optional.empty();
    }

    /** The canonical path Ollama would use for a blob (after {@code fixBlobs}), whether it exists or not. */
    public Path canonicalBlobPath(Digest d) {
        return blobsDir().resolve(d.fileName());
    }

    /** The uid owning {@code blobs/}: the store's owner, the only one whose linked blobs are served. */
    public long ownerUid() throws IOException {
        return ((Number) Files.getAttribute(blobsDir(), "unix:uid")).longValue();
    }

    /**
     * Opens a blob for reading through the one trusted open ({@link NativeFile#openRegular}): the
     * canonical {@code sha256-<hex>} file, else the legacy {@code sha256:<hex>} one; only a regular
     * file, and one that resolves outside {@code blobs/} or has other hard links only when the
     * store's owner (the owner of {@code blobs/}) owns it.
     *
     * @throws NoSuchFileException    neither name is a regular file (missing, special file, dangling link)
     * @throws UntrustedFileException a linked file the store's owner does not own
     */
    public NativeFile openBlob(Digest d) throws IOException {
        Path within;
        long owner;
        try {
            within = blobsDir().toRealPath();
            owner = ownerUid();
        } catch (NoSuchFileException e) {
            throw new NoSuchFileException(d.fileName(), null, "blob missing (no blobs/ folder)");
        }
        try {
            return NativeFile.openRegular(within.resolve(d.fileName()), within, owner);
        } catch (NoSuchFileException canonical) {
            try {
                return NativeFile.openRegular(within.resolve(d.legacyFileName()), within, owner);
            } catch (NoSuchFileException legacy) {
                throw canonical;
            }
        }
    }

    /** Reads a small blob whole (config, template, params ...), refusing anything over {@code max} bytes. */
    public byte[] readSmallBlob(Digest d, int max) throws IOException {
        try (NativeFile f = openBlob(d)) {
            return readWhole(f, max, d.fileName());
        }
    }

    private static byte[] readWhole(NativeFile f, int max, String what) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            long size = f.stat().size();
            if (size > max) {
                throw new IOException(what + " larger than " + max + " bytes");
            }
            MemorySegment buf = arena.allocate(Math.max(1, size));
            long n = f.pread(buf, 0, size, 0);
            return buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
        }
    }
}
