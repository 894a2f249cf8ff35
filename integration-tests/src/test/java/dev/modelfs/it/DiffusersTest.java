package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Image models in diffusers (issue 20) on a real mount of a store made by
 * {@code make_diffusers_fixture.py}: tiny random-weight {@code ZImagePipeline} and
 * {@code Flux2KleinPipeline}, saved with {@code save_pretrained} and imported the way Ollama's image
 * importer wrote them (v0.14 {@code "data"} blobs in bf16 and fp8; v0.16 combined blobs in bf16, int4
 * and int8). {@code check_diffusers.py} loads every tag with {@code DiffusionPipeline.from_pretrained}
 * and compares prompt embeddings and a seeded two-step image with the source folder or a folder of
 * weights decoded in numpy from the stored codes; the tree and view checkers read the same store.
 */
class DiffusersTest {
    /** The generated fixture (set when the mount is made: {@link Fixture#generate}, cached by its generator's hash). */
    static Path out;

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-diffusers-it",
            work -> (out = Fixture.generate("diffusers-fixture", "make_diffusers_fixture.py", 900)).resolve("store"));

    @Test
    void diffusersLoadsEveryTagAndReproducesEmbeddingsAndImage() throws Exception {
        mounted.cli().requireChecker(1500, "check_diffusers.py", out.toString());
    }

    @Test
    void treeAndViewsAreAsExpected() throws Exception {
        mounted.cli().requireChecker(600, "check_tree.py", out.toString());
        mounted.cli().requireChecker(900, "check_views.py", out.toString());
    }

    @Test
    void everyFolderHoldsOneWeightSet() throws Exception {
        mounted.cli().requireChecker(300, "check_one_weight_set.py");
    }

    /**
     * The bug of issue 20: a v0.14 fp8 U32 {@code [n, K/4]} weight with a {@code [n, K/32]} scale is affine
     * 8-bit g32, not int4 g64: every tensor of the bf16 folder has the shape diffusers saved in the source.
     */
    @Test
    void v014Fp8WeightsHaveTheSourceShapesAndModelIndexIsRestored() throws Exception {
        for (String pipeline : new String[] {"z-image-tiny", "flux2-klein-tiny"}) {
            for (String component : new String[] {"transformer", "text_encoder"}) {
                Path src = only(out.resolve("src").resolve(pipeline).resolve(component));
                Path served = mounted.cli().mountpoint.resolve("x/" + pipeline + ":v014-fp8/bf16/" + component).resolve(src.getFileName());
                JsonNode want = header(src);
                JsonNode got = header(served);
                want.fieldNames().forEachRemaining(k -> {
                    if (!k.equals("__metadata__")) {
                        assertEquals(want.get(k).get("shape"), got.path(k).get("shape"), served + ": " + k);
                    }
                });
            }
            JsonNode mi = new ObjectMapper().readTree(mounted.cli().mountpoint.resolve("x/" + pipeline + ":v014-fp8/model_index.json").toFile());
            JsonNode source = new ObjectMapper().readTree(out.resolve("src").resolve(pipeline).resolve("model_index.json").toFile());
            assertEquals(source.get("_class_name"), mi.get("_class_name"));
            assertFalse(mi.has("quantization") || mi.has("architecture") || mi.has("parameter_count"), mi.toString());
        }
        assertFalse(mounted.cli().log().contains("cannot tell how"), mounted.cli().log());
    }

    /** The one *.safetensors file of a component folder of the source pipeline. */
    private static Path only(Path dir) throws Exception {
        try (var s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".safetensors")).reduce((a, b) -> {
                throw new AssertionError("two weight files in " + dir);
            }).orElseThrow();
        }
    }

    /** The JSON header of a safetensors file (8-byte little-endian length, then the JSON). */
    private static JsonNode header(Path file) throws Exception {
        try (var ch = java.nio.channels.FileChannel.open(file)) {
            java.nio.ByteBuffer len = java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            ch.read(len, 0);
            long n = len.getLong(0);
            assertTrue(n > 0 && n < (1 << 24), file + ": header length " + n);
            java.nio.ByteBuffer json = java.nio.ByteBuffer.allocate((int) n);
            while (json.hasRemaining() && ch.read(json, 8 + json.position()) > 0) {
                // read the whole header
            }
            return new ObjectMapper().readTree(json.array());
        }
    }
}
