package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code modelfs verify} and {@code modelfs ls} as a user runs them (the real CLI in its own JVM): the
 * expected digests are computed here with the JDK's SHA-256 from bytes this test writes, and the
 * fixture's models come from make_fixture.py.
 */
class VerifyTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    /** A store with models m0..m{n-1}, each a config blob and two layers of random bytes; returns blob paths per model. */
    static Map<String, List<Path>> store(Path root, int n) throws Exception {
        Files.createDirectories(root.resolve("blobs"));
        Map<String, List<Path>> out = new HashMap<>();
        Random rnd = new Random(7);
        for (int m = 0; m < n; m++) {
            byte[] config = ("{\"model_format\":\"gguf\",\"file_type\":\"Q4_0\",\"n\":" + m + "}").getBytes(StandardCharsets.UTF_8);
            byte[] model = new byte[300_000 + m * 1000];
            rnd.nextBytes(model);
            byte[] license = ("license " + m + "\n").getBytes(StandardCharsets.UTF_8);
            List<Path> blobs = new java.util.ArrayList<>();
            StringBuilder layers = new StringBuilder();
            for (byte[] b : List.of(config, model, license)) {
                Path p = root.resolve("blobs/sha256-" + sha256(b));
                Files.write(p, b);
                blobs.add(p);
            }
            String manifest = "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:"
                    + sha256(config) + "\",\"size\":" + config.length + "},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:"
                    + sha256(model) + "\",\"size\":" + model.length + "},{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"sha256:"
                    + sha256(license) + "\",\"size\":" + license.length + "}]}";
            Path mp = root.resolve("manifests/registry.ollama.ai/library/m" + m + "/latest");
            Files.createDirectories(mp.getParent());
            Files.writeString(mp, manifest);
            out.put("m" + m, blobs);
        }
        return out;
    }

    static Env.Run cli(String... args) throws Exception {
        return Env.run(120, CliMount.command(args));
    }

    static JsonNode json(Env.Run r) throws Exception {
        String out = r.output();   // stdout and stderr are merged: the report is the JSON object
        return JSON.readTree(out.substring(out.indexOf("{\n")));
    }

    static Map<String, String> blobStatus(JsonNode report, String model) {
        Map<String, String> out = new HashMap<>();
        for (JsonNode m : report.get("models")) {
            if (m.get("name").asText().equals(model)) {
                m.get("blobs").forEach(b -> out.put(b.get("digest").asText().substring(7), b.get("status").asText()));
            }
        }
        return out;
    }

    static String hexOf(Path blob) {
        return blob.getFileName().toString().substring(7);
    }

    @Test
    void anIntactStoreExits0AndEveryBlobIsReportedIntact(@TempDir Path tmp) throws Exception {
        Map<String, List<Path>> models = store(tmp.resolve("store"), 5);
        Env.Run r = cli("verify", "--store", tmp.resolve("store").toString(), "--json", "--threads", "3");
        assertEquals(0, r.exit(), r.output());
        JsonNode report = json(r);
        assertTrue(report.get("intact").asBoolean());
        assertEquals(5, report.get("models").size());
        assertEquals(15, report.get("blobsChecked").asInt());
        for (var e : models.entrySet()) {
            Map<String, String> st = blobStatus(report, e.getKey() + ":latest");
            assertEquals(3, st.size(), e.getKey() + ": " + st);
            st.values().forEach(s -> assertEquals("intact", s, e.getKey() + ": " + st));
        }
        Env.Run text = cli("verify", "--store", tmp.resolve("store").toString(), "m1", "m3");
        assertEquals(0, text.exit(), text.output());
        assertTrue(text.output().contains("m1:latest") && text.output().contains("m3:latest") && !text.output().contains("m2:latest"), text.output());
        assertFalse(text.output().contains("\r"), "no progress bar when the output is no terminal:\n" + text.output());
        assertTrue(text.output().lines().anyMatch(l -> l.startsWith("2 models, 0 of them with problems; 6 blobs")), text.output());
    }

    @Test
    void corruptMissingShortAndRefusedBlobsExit1AndAreNamed(@TempDir Path tmp) throws Exception {
        Path root = tmp.resolve("store");
        Map<String, List<Path>> models = store(root, 5);
        Path flipped = models.get("m0").get(1);
        try (FileChannel ch = FileChannel.open(flipped, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
            ch.read(b, 1234);
            b.put(0, (byte) (b.get(0) ^ 1)).rewind();
            ch.write(b, 1234);
        }
        Path missing = models.get("m1").get(2);
        Files.delete(missing);
        Path shortened = models.get("m2").get(1);
        try (FileChannel ch = FileChannel.open(shortened, StandardOpenOption.WRITE)) {
            ch.truncate(1000);
        }
        // m3's model blob becomes a symlink to a root-only copy outside the store, which belongs to someone else
        Path linked = models.get("m3").get(1);
        Path outside = Files.copy(linked, tmp.resolve("outside-copy"));
        Files.setPosixFilePermissions(outside, PosixFilePermissions.fromString("rw-------"));
        Files.delete(linked);
        Files.createSymbolicLink(linked, outside);
        giveStoreTo(root, 65534);

        Env.Run r = cli("verify", "--store", root.toString(), "--json");
        assertEquals(1, r.exit(), r.output());
        JsonNode report = json(r);
        assertFalse(report.get("intact").asBoolean());
        assertEquals("corrupt", blobStatus(report, "m0:latest").get(hexOf(flipped)), r.output());
        assertEquals("missing", blobStatus(report, "m1:latest").get(hexOf(missing)), r.output());
        assertEquals("size", blobStatus(report, "m2:latest").get(hexOf(shortened)), r.output());
        assertEquals("refused", blobStatus(report, "m3:latest").get(hexOf(linked)), r.output());
        Map<String, String> m4 = blobStatus(report, "m4:latest");
        assertEquals(3, m4.size());
        m4.values().forEach(s -> assertEquals("intact", s, r.output()));
        for (JsonNode m : report.get("models")) {
            assertEquals(m.get("name").asText().equals("m4:latest") ? "intact" : "broken", m.get("status").asText(), m.toString());
        }
        Env.Run text = cli("verify", "--store", root.toString());
        assertEquals(1, text.exit(), text.output());
        assertTrue(text.output().contains("corrupt  application/vnd.ollama.image.model sha256:" + hexOf(flipped)), text.output());
        assertTrue(text.output().contains("missing  application/vnd.ollama.image.license sha256:" + hexOf(missing)), text.output());
        assertTrue(text.output().contains("blob has 1000 bytes, the manifest says"), text.output());
        assertTrue(text.output().lines().anyMatch(l -> l.startsWith("5 models, 4 of them with problems")), text.output());
        assertEquals(0, cli("verify", "--store", root.toString(), "m4").exit(), "one intact model alone exits 0");
    }

    static void giveStoreTo(Path root, int uid) throws Exception {
        assertEquals(0, Env.run(60, List.of("chown", "-hR", uid + ":" + uid, root.toString())).exit(), "chown (the test runs as root)");
    }

    @Test
    void usageAndRuntimeErrorsExit2WithOneLine(@TempDir Path tmp) throws Exception {
        store(tmp.resolve("store"), 1);
        String st = tmp.resolve("store").toString();
        for (List<String> args : List.of(List.of("verify", "--store", tmp.resolve("nowhere").toString()),
                List.of("verify", "--store", st, "no-such-model"),
                List.of("verify", "--store", st, "--threads", "0"),
                List.of("verify", "--store", st, "--no-such-option"),
                List.of("ls", "--store", tmp.resolve("nowhere").toString()))) {
            Env.Run r = cli(args.toArray(String[]::new));
            assertEquals(2, r.exit(), args + ":\n" + r.output());
            assertTrue(r.output().startsWith("modelfs: "), args + ":\n" + r.output());
        }
        Env.Run ls = cli("ls", "--store", tmp.resolve("nowhere").toString());
        assertEquals(1, ls.output().strip().lines().count(), "one line: " + ls.output());
        assertTrue(ls.output().contains("nowhere") && ls.output().contains("no model store"), ls.output());
    }

    /**
     * The fixture's v0.14 model ({@code old-llm}, {@code "data"} blobs with {@code _scale}/{@code _qbias}
     * layers) and packed-expert model ({@code moe-old}) with the {@code file_type} removed from their
     * config, as older Ollama versions wrote it: {@code ls} names their quantization from the tensors.
     */
    @Test
    void lsShowsTheQuantizationOfLegacyLayoutsWithoutAFileType(@TempDir Path tmp) throws Exception {
        Path root = Fixture.copyStore(tmp.resolve("store"));
        for (String model : List.of("old-llm", "moe-old")) {
            Path mf = root.resolve("manifests/registry.ollama.ai/library/" + model + "/latest");
            ObjectNode manifest = (ObjectNode) JSON.readTree(mf.toFile());
            String cd = manifest.get("config").get("digest").asText().substring(7);
            Path cfgPath = Files.exists(root.resolve("blobs/sha256-" + cd)) ? root.resolve("blobs/sha256-" + cd) : root.resolve("blobs/sha256:" + cd);
            ObjectNode config = (ObjectNode) JSON.readTree(cfgPath.toFile());
            config.remove("file_type");
            byte[] cb = JSON.writeValueAsBytes(config);
            Files.write(root.resolve("blobs/sha256-" + sha256(cb)), cb);
            ((ObjectNode) manifest.get("config")).put("digest", "sha256:" + sha256(cb)).put("size", cb.length);
            Files.write(mf, JSON.writeValueAsBytes(manifest));
        }
        Env.Run ls = cli("ls", "--store", root.toString());
        assertEquals(0, ls.exit(), ls.output());
        Map<String, String> quant = new HashMap<>();
        for (String line : ls.output().lines().filter(l -> l.contains("   ")).toList()) {
            String[] cols = line.trim().split("\\s{3,}");
            if (cols.length >= 5) {
                quant.put(cols[0], cols[4]);
            }
        }
        assertEquals("int8", quant.get("old-llm:latest"), ls.output());       // q8: MLX affine 8-bit
        assertEquals("int4+int8", quant.get("moe-old:latest"), ls.output());  // gate/up int4, down int8
        assertEquals("Q4_K_M", quant.get("tinyllama:latest"), "a config's file_type still wins:\n" + ls.output());
    }
}
