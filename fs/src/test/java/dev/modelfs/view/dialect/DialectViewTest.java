package dev.modelfs.view.dialect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.dialect.TinyGguf;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelView;
import dev.modelfs.view.VectorStore;
import dev.modelfs.view.gguf.GgufModelView;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files of a model stored in Ollama's dialect (docs/SEMANTICS.md "Ollama's GGUF dialect"), read as a reader of
 * the mount reads them: the translated {@code model.gguf} (its tensors the blob's bytes), the stored blob under
 * {@code ollama/model.gguf}, {@code mmproj.gguf} with its promoted tensors, and the GGUF variants built from the
 * translation; a model in upstream's form and a refused one keep the stored blob as {@code model.gguf}.
 */
class DialectViewTest {
    private static final String MODEL = "application/vnd.ollama.image.model";
    private static final List<ModelView> VIEWS = List.of(new DialectView(), new GgufModelView());

    @TempDir
    Path root;

    private DirNode store(byte[] blob) throws IOException {
        return VectorStore.model(root, "m", "{\"model_format\":\"gguf\"}", List.of(new VectorStore.Layer(MODEL, blob, null)), VIEWS);
    }

    private static FileNode file(DirNode dir, String path) {
        DirNode d = dir;
        String[] parts = path.split("/");
        for (int i = 0; i < parts.length - 1; i++) {
            d = (DirNode) d.child(parts[i]);
        }
        return (FileNode) d.child(parts[parts.length - 1]);
    }

    private static GgufFile header(byte[] file) {
        return GgufReader.read(MemorySegment.ofArray(file));
    }

    private static byte[] data(byte[] file, GgufFile g, String tensor) {
        GgufTensorInfo t = g.tensor(tensor);
        int at = Math.toIntExact(g.dataStart() + t.offset());
        return Arrays.copyOfRange(file, at, at + Math.toIntExact(t.byteSize()));
    }

    @Test
    void aGemma3DialectModelIsServedTranslatedWithItsBlobAndProjector() throws IOException {
        byte[] blob = TinyGguf.gemma3Dialect().bytes();
        GgufFile stored = header(blob);
        DirNode dir = store(blob);

        byte[] raw = VectorStore.read(root, file(dir, "ollama/model.gguf"));
        assertArrayEquals(blob, raw, "the stored blob byte for byte");
        assertTrue(file(dir, "ollama/model.gguf").xattrs().containsKey("user.modelfs.digest"));

        byte[] model = VectorStore.read(root, file(dir, "model.gguf"));
        GgufFile text = header(model);
        assertEquals(List.of("token_embd.weight", "blk.0.attn_norm.weight", "output_norm.weight"),
                text.tensors().stream().map(GgufTensorInfo::name).toList());
        assertNotNull(text.kv("gemma3.attention.layer_norm_rms_epsilon"));
        for (GgufTensorInfo t : text.tensors()) {
            assertArrayEquals(data(blob, stored, t.name()), data(model, text, t.name()), t.name());
        }
        assertTrue(file(dir, "model.gguf").xattrs().get("user.modelfs.source").contains("gemma3"));

        byte[] mmproj = VectorStore.read(root, file(dir, "mmproj.gguf"));
        GgufFile clip = header(mmproj);
        assertEquals("clip", clip.kv("general.architecture").value());
        assertEquals(GgmlType.F32, clip.tensor("v.patch_embd.weight").type());
        float[] promoted = floats(data(mmproj, clip, "v.patch_embd.weight"));
        byte[] half = data(blob, stored, "v.patch_embedding.weight");
        ByteBuffer h = ByteBuffer.wrap(half).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < promoted.length; i++) {
            assertEquals(Float.float16ToFloat(h.getShort(2 * i)), promoted[i], 0f, "element " + i);
        }
        assertArrayEquals(data(blob, stored, "mm.mm_input_projection.weight"), data(mmproj, clip, "mm.input_projection.weight"));

        GgufFile fp32 = header(VectorStore.read(root, file(dir, "model.fp32.gguf")));
        assertNotNull(fp32.kv("gemma3.attention.layer_norm_rms_epsilon"), "the variants read through the translation");
        assertNull(fp32.tensor("v.patch_embedding.weight"));
    }

    @Test
    void aProjectorLayerKeepsItsNameAndOneWithoutATypeIsTranslated() throws IOException {
        byte[] model = TinyGguf.gemma3Dialect().bytes();
        byte[] typed = new TinyGguf().str("general.architecture", "clip").kv("clip.has_vision_encoder", dev.modelfs.format.gguf.GgufValueType.BOOL, true)
                .str("clip.projector_type", "ldp").tensor("mm.0.weight", GgmlType.F32, 8, 8).bytes();
        DirNode dir = VectorStore.model(root, "typed", "{}", List.of(new VectorStore.Layer(MODEL, model, null),
                new VectorStore.Layer("application/vnd.ollama.image.projector", typed, null)), VIEWS);
        assertArrayEquals(typed, VectorStore.read(root, file(dir, "mmproj.gguf")), "the projector layer keeps mmproj.gguf");
        assertFalse(((DirNode) dir.child("ollama")).children().containsKey("mmproj.gguf"));

        byte[] untyped = new TinyGguf().str("general.architecture", "clip").kv("clip.has_vision_encoder", dev.modelfs.format.gguf.GgufValueType.BOOL, true)
                .tensor("mm.0.weight", GgmlType.F32, 8, 8).bytes();
        DirNode llava = VectorStore.model(root, "llava", "{}", List.of(new VectorStore.Layer(MODEL, java.nio.file.Files.readAllBytes(dev.modelfs.format.Vectors.file("tiny-llama.gguf")), null),
                new VectorStore.Layer("application/vnd.ollama.image.projector", untyped, null)), VIEWS);
        assertArrayEquals(untyped, VectorStore.read(root, file(llava, "ollama/mmproj.gguf")));
        GgufFile translated = header(VectorStore.read(root, file(llava, "mmproj.gguf")));
        assertEquals("mlp", translated.kv("clip.projector_type").value());
        assertArrayEquals(data(untyped, header(untyped), "mm.0.weight"), data(VectorStore.read(root, file(llava, "mmproj.gguf")), translated,
                "mm.0.weight"));
        assertFalse(((DirNode) llava.child("ollama")).children().containsKey("model.gguf"), "the model layer is upstream's form");
    }

    @Test
    void aModelInUpstreamFormKeepsItsBlob() throws IOException {
        DirNode dir = VectorStore.tinyLlama(root, VIEWS);
        assertFalse(((DirNode) dir.child("ollama")).children().containsKey("model.gguf"));
        assertNull(dir.child("mmproj.gguf"));
        assertTrue(file(dir, "model.gguf").xattrs().containsKey("user.modelfs.digest"));
    }

    @Test
    void aRefusedDialectHeaderKeepsItsBlob() throws IOException {
        // gemma3 markers, but two tokens for four embedding rows
        byte[] blob = new TinyGguf().str("general.architecture", "gemma3").u32("gemma3.mm.tokens_per_image", 1).vocab(2)
                .tensor("token_embd.weight", GgmlType.F32, 8, 4).bytes();
        DirNode dir = store(blob);
        assertArrayEquals(blob, VectorStore.read(root, file(dir, "model.gguf")));
        assertTrue(file(dir, "model.gguf").xattrs().containsKey("user.modelfs.digest"));
        assertInstanceOf(DirNode.class, dir.child("ollama"));
        assertFalse(((DirNode) dir.child("ollama")).children().containsKey("model.gguf"));
    }

    private static float[] floats(byte[] b) {
        float[] f = new float[b.length / 4];
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }
}
