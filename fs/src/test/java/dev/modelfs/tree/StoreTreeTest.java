package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreTreeTest {
    @TempDir
    Path root;

    private void manifest(String model, String content) throws IOException {
        Path p = root.resolve("manifests/registry.ollama.ai/library/" + model + "/latest");
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    void aBrokenManifestIsLoggedOncePerChangeOfItsOwnFileNotOnEveryRescan() throws IOException {
        List<String> lines = new ArrayList<>();
        Logger log = Logger.getLogger(StoreTree.class.getName());
        Handler h = new Handler() {
            @Override public void publish(LogRecord r) { lines.add(r.getMessage()); }
            @Override public void flush() { }
            @Override public void close() { }
        };
        log.addHandler(h);
        try {
            manifest("broken", "{not json");
            StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(List.of()));
            assertEquals(1, lines.size(), lines.toString());
            assertTrue(lines.getFirst().contains("broken"), lines.toString());

            manifest("other", "[]");                    // another manifest changes: the store is rescanned
            assertTrue(tree.refresh());
            manifest("third", "[]");
            assertTrue(tree.refresh());
            assertEquals(1, lines.stream().filter(l -> l.contains("broken")).count(), lines.toString());
            assertEquals(3, lines.size(), "one line for each new broken manifest: " + lines);

            manifest("broken", "{still not json}");    // the broken manifest itself changes: one new line
            assertTrue(tree.refresh());
            assertEquals(2, lines.stream().filter(l -> l.contains("broken")).count(), lines.toString());
            assertTrue(tree.models().isEmpty());
        } finally {
            log.removeHandler(h);
        }
    }

    /** Writes a blob and returns its digest ({@code sha256:<hex>}). */
    private String blob(byte[] bytes) throws Exception {
        String hex = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        Files.createDirectories(root.resolve("blobs"));
        Files.write(root.resolve("blobs/sha256-" + hex), bytes);
        return "sha256:" + hex;
    }

    private static String manifestWith(String digest, long size) {
        return "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                + "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"" + digest
                + "\",\"size\":" + size + "},\"layers\":[]}";
    }

    @Test
    void countsServedAndBrokenModelsAndNamesTheModelOfAPath() throws Exception {
        String config = blob("{}".getBytes());
        manifest("good", manifestWith(config, 2));
        manifest("short", manifestWith(config, 3));                                // the blob has 2 bytes
        manifest("gone", manifestWith("sha256:" + "ab".repeat(32), 2));            // no such blob
        manifest("unparsable", "{not json");
        Path namespaced = root.resolve("manifests/registry.ollama.ai/x/img/latest");
        Files.createDirectories(namespaced.getParent());
        Files.writeString(namespaced, manifestWith(config, 2));
        StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(List.of()));
        assertEquals(new StoreTree.ModelCounts(4, 3), tree.modelCounts(), "4 served; short, gone and unparsable broken");
        assertEquals("x/img", tree.modelOf("/x/img/ollama/manifest.json"));
        assertNull(tree.modelOf("/x"), "a namespace folder is no model");

        assertEquals("good", tree.modelOf("/good/ollama/config.json"));
        assertEquals("good", tree.modelOf("good"));
        assertNull(tree.modelOf("/"));
        assertNull(tree.modelOf("/goodness/x"));
        long goodInode = tree.models().get("good").dir().inode();
        assertEquals("good", tree.modelWithInode(goodInode));
        assertNull(tree.modelWithInode(12345));

        Files.delete(root.resolve("manifests/registry.ollama.ai/library/short/latest"));
        assertTrue(tree.refresh());
        assertEquals(new StoreTree.ModelCounts(3, 2), tree.modelCounts());
    }

    /**
     * Every snapshot names exactly the model directories its root holds, while another thread refreshes as models are
     * pulled and removed: a reader walking the folders above the models (the NFS server's handle index) never mistakes
     * a model directory for a folder and lists it, which would build the model and wait on the store's disk (the soak's
     * stalled NFS listing of stop 42: the root was published before the models it held).
     */
    @Test
    void aSnapshotNamesExactlyTheModelDirectoriesOfItsRootWhileRefreshesRun() throws Exception {
        String config = blob("{}".getBytes());
        manifest("steady", manifestWith(config, 2));
        manifestAt("x", "img", manifestWith(config, 2), 1_700_000_000L);
        StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(List.of()));
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        List<String> wrong = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread reader = new Thread(() -> {
            int seen = 0;
            while (!done.get() || seen == 0) {
                StoreTree.Snapshot snap = tree.snapshot();
                int found = modelDirsUnder(snap.root(), snap.modelDirs());
                if (found != snap.modelDirs().size()) {
                    wrong.add(found + " model directories under the root, the snapshot names " + snap.modelDirs().size());
                }
                seen++;
            }
        });
        reader.start();
        try {
            for (int i = 0; i < 300; i++) {
                String name = i % 2 == 0 ? "pulled-" + i : "x-pulled-" + i;
                if (i % 2 == 0) {
                    manifest(name, manifestWith(config, 2));
                } else {
                    manifestAt("x", name, manifestWith(config, 2), 1_700_000_000L + i);
                }
                assertTrue(tree.refresh());
                StoreTree.Snapshot after = tree.snapshot();
                assertEquals(after.modelDirs().size(), modelDirsUnder(after.root(), after.modelDirs()));
                assertEquals(2 + 1, after.modelDirs().size(), "steady, x/img and the one pulled");
                Files.delete(i % 2 == 0 ? root.resolve("manifests/registry.ollama.ai/library/" + name + "/latest")
                        : root.resolve("manifests/registry.ollama.ai/x/" + name + "/latest"));
                assertTrue(tree.refresh());
            }
        } finally {
            done.set(true);
            reader.join(60_000);
        }
        assertTrue(wrong.isEmpty(), wrong.subList(0, Math.min(5, wrong.size())).toString());
        assertEquals(tree.root(), tree.snapshot().root());
    }

    /** The model directories under {@code dir}, found without listing any of them (only the folders above). */
    private static int modelDirsUnder(DirNode dir, java.util.Set<DirNode> modelDirs) {
        int n = 0;
        for (Node c : dir.children().values()) {
            if (c instanceof DirNode d) {
                n += modelDirs.contains(d) ? 1 : modelDirsUnder(d, modelDirs);
            }
        }
        return n;
    }

    /** Every directory's mtime by path, the root as {@code ""}. */
    private static Map<String, Long> directoryTimes(DirNode dir, String path, Map<String, Long> out) {
        out.put(path, dir.mtimeNanos());
        dir.children().forEach((name, n) -> {
            if (n instanceof DirNode d) {
                directoryTimes(d, path.isEmpty() ? name : path + "/" + name, out);
            }
        });
        return out;
    }

    private static Map<String, Long> directoryTimes(StoreTree tree) {
        return directoryTimes(tree.root(), "", new TreeMap<>());
    }

    private Path manifestAt(String namespace, String model, String content, long epochSecond) throws IOException {
        Path p = root.resolve("manifests/registry.ollama.ai/" + namespace + "/" + model + "/latest");
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
        Files.setLastModifiedTime(p, FileTime.from(Instant.ofEpochSecond(epochSecond)));
        return p;
    }

    @Test
    void aFolderMovesForwardWhenItsListingChangesAndStaysWhenItDoesNot() throws Exception {
        String config = blob("{}".getBytes());
        String m = manifestWith(config, 2);
        long second = 1_000_000_000L;
        manifestAt("library", "old", m, 1_000);
        Path newest = manifestAt("library", "newest", m, 3_000);
        manifestAt("x", "img", m, 2_000);
        manifestAt("y", "one", m, 1_500);
        Path two = manifestAt("y", "two", m, 1_200);
        StoreTree tree = new StoreTree(new OllamaStore(root), new ModelDirectory(List.of()));
        Map<String, Long> first = directoryTimes(tree);
        assertEquals(3_000 * second, first.get(""), "a folder first seen carries its newest entry's mtime");
        assertEquals(2_000 * second, first.get("x"));
        assertEquals(1_500 * second, first.get("y"));

        assertFalse(tree.refresh(), "nothing changed");
        assertEquals(first, directoryTimes(tree), "an unchanged rescan keeps every directory's mtime");

        Files.delete(two);                                  // y's listing changes, the root's and x's do not
        assertTrue(tree.refresh());
        Map<String, Long> afterTwo = directoryTimes(tree);
        assertTrue(afterTwo.get("y") > first.get("y"), "y lost an entry: " + first + " -> " + afterTwo);
        assertEquals(first.get(""), afterTwo.get(""), "the root lists the same folders");
        assertEquals(first.get("x"), afterTwo.get("x"));
        assertEquals(first.get("old"), afterTwo.get("old"), "an untouched model directory");

        Files.delete(newest);                               // the newest manifest goes: the root still moves forward
        assertTrue(tree.refresh());
        Map<String, Long> afterNewest = directoryTimes(tree);
        assertTrue(afterNewest.get("") > afterTwo.get(""), "the root lost an entry: " + afterTwo + " -> " + afterNewest);
        assertFalse(afterNewest.containsKey("newest"));
        assertEquals(afterTwo.get("y"), afterNewest.get("y"));

        assertFalse(tree.refresh());
        assertEquals(afterNewest, directoryTimes(tree), "an unchanged rescan keeps every directory's mtime");

        manifestAt("library", "added", m, 500);            // an older manifest appears: still forward
        assertTrue(tree.refresh());
        assertTrue(directoryTimes(tree).get("") > afterNewest.get(""), "the root gained an entry");
    }
}
