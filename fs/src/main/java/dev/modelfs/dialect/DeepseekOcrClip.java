package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * The SAM encoder, CLIP tower and projector embedded in an Ollama {@code deepseekocr} file, for llama.cpp's clip loader
 * ({@code mmproj.gguf}, projector {@code deepseekocr}): Ollama's {@code handle_deepseekocr_clip} (docs/FORMATS.md
 * §12.18), step by step: the {@code deepseekocr.vision.*} and {@code deepseekocr.sam.*} keys copied to
 * {@code clip.vision.*} and {@code clip.vision.sam.*}; the defaults of the published model injected (scale factor 1,
 * window 14, layer-norm epsilon 1e-6, image mean and deviation 0.5); projector {@code deepseekocr}; {@code s.*}
 * renamed {@code v.sam.*} (at the start of a name only), {@code v.sam.position_embd} renamed
 * {@code v.sam.pos_embd.weight}; {@code kDeepseekocrClipRenames} (CLIP leaves, SAM leaves, the projector
 * {@code mm.model.fc}, {@code v.image_newline}, {@code v.view_seperator}); {@code v.patch_embd},
 * {@code v.sam.patch_embd} and {@code v.position_embd} promoted from F16 to F32.
 *
 * <p>Where modelfs differs from Ollama's in-memory view, so that the file is the one llama.cpp's converter writes with
 * {@code --mmproj}: the file holds only what a projector file holds (the text tensors, the {@code deepseekocr.*} and
 * {@code tokenizer.*} keys are left out); {@code clip.vision.feed_forward_length} is four times the CLIP head count and
 * {@code clip.vision.projection_dim} the text width (the converter's values; Ollama injects 64 and 1280, which they are
 * for the published model: 16 heads, width 1280); {@code clip.vision.preproc_min_tiles} 2 and {@code preproc_max_tiles}
 * 9 are written (the converter's values for DeepSeek-OCR, also clip.cpp's defaults); {@code v.view_seperator} gets the
 * converter's dimensions {@code [n, 1]} (the same bytes). A header without the keys clip.cpp requires, or without the
 * projector and the SAM tensors it loads, is refused as a whole.
 */
public record DeepseekOcrClip() implements DialectHandler {
    private static final String A = DeepseekOcrText.SRC;
    /** {@code kDeepseekocrClipRenames}, in Ollama's order (each: the first occurrence in every name). */
    private static final List<String[]> RENAMES = List.of(
            new String[] {".self_attn.out_proj", ".attn_out"},
            new String[] {".self_attn.qkv_proj", ".attn_qkv"},
            new String[] {".layer_norm1", ".ln1"},
            new String[] {".layer_norm2", ".ln2"},
            new String[] {".mlp.fc1", ".ffn_up"},
            new String[] {".mlp.fc2", ".ffn_down"},
            new String[] {"v.pre_layrnorm", "v.pre_ln"},
            new String[] {".attn.proj", ".attn.out"},
            new String[] {".attn.rel_pos_h", ".attn.pos_h.weight"},
            new String[] {".attn.rel_pos_w", ".attn.pos_w.weight"},
            new String[] {".norm1", ".pre_ln"},
            new String[] {".norm2", ".post_ln"},
            new String[] {"mm.layers", "mm.model.fc"},
            new String[] {"mm.image_newline", "v.image_newline"},
            new String[] {"mm.view_seperator", "v.view_seperator"});
    /** The tensors clip.cpp's {@code PROJECTOR_TYPE_DEEPSEEKOCR} loader requires beyond the blocks. */
    private static final List<String> REQUIRED = List.of("v.sam.pos_embd.weight", "v.sam.patch_embd.weight", "v.sam.net_2.weight",
            "v.sam.net_3.weight", "v.view_seperator", "mm.model.fc.weight", "mm.model.fc.bias", "v.position_embd.weight", "v.class_embd");

    @Override
    public String name() {
        return "deepseekocr (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_deepseekocr}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new DeepseekOcrText().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.copy(A + "vision.block_count", "clip.vision.block_count", GgufValueType.UINT32);
        e.copy(A + "vision.embedding_length", "clip.vision.embedding_length", GgufValueType.UINT32);
        e.copy(A + "vision.head_count", "clip.vision.attention.head_count", GgufValueType.UINT32);
        e.copy(A + "vision.image_size", "clip.vision.image_size", GgufValueType.UINT32);
        e.copy(A + "vision.patch_size", "clip.vision.patch_size", GgufValueType.UINT32);
        e.copy(A + "sam.block_count", "clip.vision.sam.block_count", GgufValueType.UINT32);
        e.copy(A + "sam.embedding_length", "clip.vision.sam.embedding_length", GgufValueType.UINT32);
        e.copy(A + "sam.head_count", "clip.vision.sam.head_count", GgufValueType.UINT32);
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.attention.head_count",
                "clip.vision.image_size", "clip.vision.patch_size", "clip.vision.sam.block_count", "clip.vision.sam.embedding_length",
                "clip.vision.sam.head_count"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (" + A + "vision.* / sam.* incomplete)");
            }
        }
        long heads = DeepseekOcrText.u32(e.kv("clip.vision.attention.head_count"));
        e.inject("clip.vision.feed_forward_length", GgufValueType.UINT32, (int) Math.multiplyExact(4, heads));
        if (g.kv(A + "embedding_length") == null) {
            throw new FormatException("no " + A + "embedding_length (the projection width)");
        }
        e.copy(A + "embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.projector.scale_factor", GgufValueType.UINT32, 1);
        e.inject("clip.vision.window_size", GgufValueType.UINT32, 14);
        e.inject("clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32, 1e-6f);
        GgufArray half = new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f));
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, half);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, half);
        e.inject("clip.vision.preproc_min_tiles", GgufValueType.UINT32, 2);
        e.inject("clip.vision.preproc_max_tiles", GgufValueType.UINT32, 9);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "deepseekocr");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        e.removeWithPrefix(A, "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "s.", "v.", "mm.");
        for (GgufTensorInfo t : g.tensors()) {   // step 1: s. -> v.sam. at the start of a name only
            if (t.name().startsWith("s.")) {
                e.rename(t.name(), "v.sam." + t.name().substring(2));
            }
        }
        e.rename("v.sam.position_embd", "v.sam.pos_embd.weight");   // step 2
        for (String[] r : RENAMES) {                                  // step 3
            e.renameContaining(r[0], r[1]);
        }
        e.promoteToF32("v.patch_embd.weight");
        e.promoteToF32("v.sam.patch_embd.weight");
        e.promoteToF32("v.position_embd.weight");
        for (String need : REQUIRED) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        GgufTensorInfo sep = e.tensor("v.view_seperator");
        if (sep.rank() == 1) {
            e.reshape("v.view_seperator", new long[] {sep.ne()[0], 1});
        }
        return e.build(name(), face());
    }
}
