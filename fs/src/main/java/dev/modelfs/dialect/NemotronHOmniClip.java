package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.Arrays;
import java.util.List;

/**
 * The RADIO vision tower and projector embedded in an Ollama {@code nemotron_h_omni} file (Nemotron 3 Omni), for
 * llama.cpp's clip loader ({@code mmproj.gguf}, projector {@code nemotron_v2_vl}): Ollama's
 * {@code handle_nemotron_h_omni_clip} (docs/FORMATS.md §12.17).
 *
 * <p>KVs: the {@code nemotron_h_omni.vision.*} keys copied to {@code clip.vision.*}, RADIO v2.5-h's defaults injected
 * where absent, {@code clip.vision.projector_type = nemotron_v2_vl}, {@code clip.has_audio_encoder = false} (the
 * Parakeet audio encoder stays out, as in Ollama's layer). Tensors: {@code v.cls_embd} → {@code v.class_embd} (F32);
 * the position table {@code v.position_embd} ({@code [embedding, side²]}) → {@code v.position_embd.weight}
 * ({@code [embedding, (image_size / patch_size)²]}, F32, downsampled bilinearly with aligned corners when its side
 * differs: {@code register_nemotron3_position_embedding}); the linear patch embedding {@code v.patch_embd.weight}
 * ({@code [p·p·channels, embedding]}) as the conv kernel {@code [p, p, channels, embedding]} in F32, the same element
 * order ({@code register_nemotron3_patch_embedding}); the projector {@code mm.norm}, {@code mm.1}, {@code mm.2} →
 * {@code mm.model.mlp.0/1/3}. As for every clip face here, the file holds only what a projector file holds: the text
 * tensors, the audio tensors ({@code a.*}, {@code mm.a.*}) and the {@code nemotron_h_omni.*} and {@code tokenizer.*}
 * keys are left out. Refused: a vision key of another type, a position table or patch embedding of another layout,
 * or a missing tower tensor.
 */
public record NemotronHOmniClip() implements DialectHandler {
    private static final String V = NemotronHOmni.ARCH + ".vision.";
    private static final GgufArray MEAN = new GgufArray(GgufValueType.FLOAT32, List.of(0.48145466f, 0.45782750f, 0.40821073f));
    private static final GgufArray STD = new GgufArray(GgufValueType.FLOAT32, List.of(0.26862954f, 0.26130258f, 0.27577711f));

    @Override
    public String name() {
        return "nemotron_h_omni (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_nemotron_h_omni}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new NemotronHOmni().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.set("general.architecture", GgufValueType.STRING, "clip");
        for (String k : new String[] {"block_count", "embedding_length", "feed_forward_length", "attention.head_count", "patch_size",
                "image_size", "num_channels", "projector.scale_factor"}) {
            e.copy(V + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy(V + "attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        e.copy(NemotronHOmni.ARCH + ".embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.copy(V + "image_mean", "clip.vision.image_mean");
        e.copy(V + "image_std", "clip.vision.image_std");
        for (String k : new String[] {"image_token_id", "image_start_token_id", "image_end_token_id", "max_tiles", "min_num_patches",
                "max_num_patches"}) {
            e.copy(V + k, "clip.vision." + k);
        }
        long imageSize = u32(e, "clip.vision.image_size", 512);
        long patchSize = u32(e, "clip.vision.patch_size", 16);
        long embedding = u32(e, "clip.vision.embedding_length", 1280);
        long channels = u32(e, "clip.vision.num_channels", 3);
        e.inject("clip.vision.block_count", GgufValueType.UINT32, 32);
        e.inject("clip.vision.embedding_length", GgufValueType.UINT32, (int) embedding);
        e.inject("clip.vision.feed_forward_length", GgufValueType.UINT32, (int) Math.multiplyExact(embedding, 4));
        e.inject("clip.vision.attention.head_count", GgufValueType.UINT32, 16);
        e.inject("clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32, 1e-6f);
        e.inject("clip.vision.patch_size", GgufValueType.UINT32, (int) patchSize);
        e.inject("clip.vision.image_size", GgufValueType.UINT32, (int) imageSize);
        e.inject("clip.vision.num_channels", GgufValueType.UINT32, (int) channels);
        e.inject("clip.vision.projector.scale_factor", GgufValueType.UINT32, 2);
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, MEAN);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, STD);
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.set("clip.vision.projector_type", GgufValueType.STRING, "nemotron_v2_vl");
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.has_audio_encoder", GgufValueType.BOOL, false);
        if (!e.has("clip.vision.projection_dim")) {
            throw new FormatException("no " + NemotronHOmni.ARCH + ".embedding_length (the projection width)");
        }
        e.removeWithPrefix(NemotronHOmni.ARCH + ".", "tokenizer.");
        e.dropWithPrefix("a.", "audio encoder (disabled, as in Ollama's layer)");
        e.dropWithPrefix("mm.a.", "audio projector (disabled, as in Ollama's layer)");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        e.rename("v.cls_embd", "v.class_embd");
        e.promoteToF32("v.class_embd");
        positionTable(e, embedding, patchSize == 0 ? 0 : imageSize / patchSize);
        patchEmbedding(e, patchSize, channels, embedding);
        e.rename("mm.norm.weight", "mm.model.mlp.0.weight");
        e.rename("mm.1.weight", "mm.model.mlp.1.weight");
        e.rename("mm.2.weight", "mm.model.mlp.3.weight");
        for (String need : new String[] {"v.class_embd", "v.position_embd.weight", "v.patch_embd.weight", "mm.model.mlp.0.weight",
                "mm.model.mlp.1.weight", "mm.model.mlp.3.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        return e.build(name(), face());
    }

    /** {@code read_u32_kv}: the UINT32 value of {@code key} in the working copy, {@code fallback} when absent. */
    private static long u32(HeaderEdit e, String key, long fallback) {
        GgufKv kv = e.kv(key);
        return kv == null ? fallback : Integer.toUnsignedLong((Integer) kv.value());   // copied as UINT32 above
    }

    /**
     * {@code register_nemotron3_position_embedding} for the layout Ollama's converter writes, {@code [embedding, side²]}
     * (the checkpoint's {@code [1, side², embedding]} without its leading 1).
     */
    private static void positionTable(HeaderEdit e, long embedding, long targetSide) {
        String from = e.tensor("v.position_embd") != null ? "v.position_embd" : "v.position_embd.weight";
        GgufTensorInfo t = e.tensor(from);
        if (t == null) {
            throw new FormatException("no v.position_embd");
        }
        long side = t.ne().length == 2 ? squareSide(t.ne()[1]) : 0;
        if (side == 0 || t.ne()[0] != embedding || targetSide <= 0) {
            throw new FormatException(from + " has dimensions " + Arrays.toString(t.ne()) + ", not [" + embedding + ", side²] for a "
                    + targetSide + "² grid");
        }
        e.downsampleSquare(from, "v.position_embd.weight", side, targetSide);
    }

    /** {@code register_nemotron3_patch_embedding}: {@code [p·p·channels, embedding]} read as {@code [p, p, channels, embedding]}. */
    private static void patchEmbedding(HeaderEdit e, long patch, long channels, long embedding) {
        GgufTensorInfo t = e.tensor("v.patch_embd.weight");
        if (t == null) {
            throw new FormatException("no v.patch_embd.weight");
        }
        long flat = Math.multiplyExact(Math.multiplyExact(patch, patch), channels);
        if (t.ne().length != 2 || t.ne()[0] != flat || t.ne()[1] != embedding) {
            throw new FormatException("v.patch_embd.weight has dimensions " + Arrays.toString(t.ne()) + ", not [" + flat + ", " + embedding + "]");
        }
        e.reshapeToF32("v.patch_embd.weight", new long[] {patch, patch, channels, embedding});
    }

    /** {@code nemotron3_square_side}: the side of a square of {@code n} positions, 0 when {@code n} is not a square. */
    static long squareSide(long n) {
        long side = (long) Math.sqrt((double) n);
        for (long s = Math.max(0, side - 1); s <= side + 1; s++) {
            if (s > 0 && s * s == n) {
                return s;
            }
        }
        return 0;
    }

    /** The F16/BF16/F32 types a computed vision tensor is read from. */
    static boolean floatType(GgmlType t) {
        return t == GgmlType.F16 || t == GgmlType.BF16 || t == GgmlType.F32;
    }
}
