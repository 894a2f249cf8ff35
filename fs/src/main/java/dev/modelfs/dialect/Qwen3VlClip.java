package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The Qwen3-VL vision tower, deepstack adapters and merger embedded in an Ollama {@code qwen3vl} /
 * {@code qwen3vlmoe} file, for llama.cpp's clip loader ({@code mmproj.gguf}): Ollama's {@code handle_qwen3vl_clip}
 * (docs/FORMATS.md §12.12), step by step: the {@code A.vision.*} keys copied to {@code clip.vision.*} (temporal
 * patch size 2 and rope base 10000 when missing), the feed-forward width from {@code v.blk.0.mlp.linear_fc1.weight},
 * the image size from the position table ({@code sqrt(rows) * patch}), the image statistics and pixel limits
 * (copied, else 0.5 and 65536 / 16777216), the {@code is_deepstack_layers} mask from
 * {@code A.vision.deepstack_visual_indexes}, projector {@code qwen3vl_merger}; each block's {@code attn_q/k/v}
 * (weight and bias) stored one after another as {@code attn_qkv}; the Conv3D {@code v.patch_embed.weight} split
 * into its two temporal slices (F32, computed per chunk); the merger, patch bias and position table renamed,
 * {@code v.deepstack_merger.X.*} renamed {@code v.deepstack.<indexes[X]>.*}; the per-block substring renames;
 * {@code v.position_embd} promoted to F32.
 *
 * <p>Where modelfs differs from Ollama's in-memory view: the file holds only what a projector file holds (the text
 * tensors, the {@code A.*} and {@code tokenizer.*} keys are left out); {@code clip.vision.num_channels} is not
 * written (llama.cpp's converter writes no such key and clip.cpp reads none; the channel count of the patch split
 * comes from {@code A.vision.num_channels}, 3 when absent); the QKV parts keep their stored type (llama.cpp's
 * converter writes {@code attn_qkv} in the type of the parts; Ollama widens to F32 because its parts may mix types,
 * which is refused here). A header without the vision keys clip.cpp requires, or whose QKV, patch embedding or
 * merger does not fit, is refused as a whole.
 */
public record Qwen3VlClip() implements DialectHandler {
    static final int MIN_PIXELS = 65536;
    static final int MAX_PIXELS = 16777216;

    @Override
    public String name() {
        return "qwen3vl (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_qwen3vl}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && new Qwen3VlText().matches(g);
    }

    @Override
    public Translation translate(GgufFile g) {
        String a = Qwen3VlText.arch(g);
        HeaderEdit e = new HeaderEdit(g);
        e.copy(a + ".vision.attention.head_count", "clip.vision.attention.head_count", GgufValueType.UINT32);
        e.copy(a + ".vision.attention.layer_norm_epsilon", "clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32);
        for (String k : new String[] {"block_count", "embedding_length", "patch_size", "spatial_merge_size", "temporal_patch_size"}) {
            e.copy(a + ".vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy(a + ".vision.rope.freq_base", "clip.vision.rope.freq_base", GgufValueType.FLOAT32);
        e.copy(a + ".embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.temporal_patch_size", GgufValueType.UINT32, 2);
        e.inject("clip.vision.rope.freq_base", GgufValueType.FLOAT32, 10000f);
        if (!e.has("clip.vision.feed_forward_length")) {
            GgufTensorInfo fc1 = g.tensor("v.blk.0.mlp.linear_fc1.weight");
            if (fc1 != null && fc1.rank() >= 2) {
                e.set("clip.vision.feed_forward_length", GgufValueType.UINT32, (int) fc1.ne()[1]);
            }
        }
        GgufTensorInfo pos = g.tensor("v.pos_embed.weight");
        if (!e.has("clip.vision.image_size") && pos != null && pos.rank() >= 2 && g.kv(a + ".vision.patch_size") != null) {
            long side = (long) Math.sqrt((double) pos.ne()[1]);
            e.set("clip.vision.image_size", GgufValueType.UINT32, (int) (side * Markers.u32(g, a + ".vision.patch_size")));
        }
        e.copy(a + ".vision.image_mean", "clip.vision.image_mean");
        e.copy(a + ".vision.image_std", "clip.vision.image_std");
        e.copy(a + ".vision.shortest_edge", "clip.vision.image_min_pixels", GgufValueType.UINT32);
        e.copy(a + ".vision.longest_edge", "clip.vision.image_max_pixels", GgufValueType.UINT32);
        e.inject("clip.vision.image_min_pixels", GgufValueType.UINT32, MIN_PIXELS);
        e.inject("clip.vision.image_max_pixels", GgufValueType.UINT32, MAX_PIXELS);
        GgufArray half = new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f));
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, half);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, half);
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.attention.head_count",
                "clip.vision.patch_size", "clip.vision.projection_dim", "clip.vision.feed_forward_length", "clip.vision.image_size"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (" + a + ".vision.* incomplete)");
            }
        }
        long blocks = Integer.toUnsignedLong((Integer) e.kv("clip.vision.block_count").value());
        if (blocks == 0 || blocks > 4096) {
            throw new FormatException("clip.vision.block_count " + blocks + " out of range");
        }
        List<Long> deepstack = deepstackIndexes(g.kv(a + ".vision.deepstack_visual_indexes"));
        if (!e.has("clip.vision.is_deepstack_layers")) {
            List<Object> mask = new ArrayList<>(Collections.nCopies((int) blocks, false));
            for (long i : deepstack) {
                if (i >= 0 && i < blocks) {
                    mask.set((int) i, true);
                }
            }
            e.set("clip.vision.is_deepstack_layers", GgufValueType.ARRAY, new GgufArray(GgufValueType.BOOL, mask));
        }
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "qwen3vl_merger");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        e.removeWithPrefix(a + ".", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        for (long b = 0; b < blocks; b++) {          // the per-block QKV merge, before the renames
            String p = "v.blk." + b + ".attn_";
            if (e.tensor(p + "q.weight") == null) {
                continue;
            }
            e.concatSlowest(List.of(p + "q.weight", p + "k.weight", p + "v.weight"), p + "qkv.weight");
            if (e.tensor(p + "q.bias") != null) {
                e.concatSlowest(List.of(p + "q.bias", p + "k.bias", p + "v.bias"), p + "qkv.bias");
            }
        }
        GgufKv channels = g.kv(a + ".vision.num_channels");
        if (channels != null && channels.type() != GgufValueType.UINT32) {
            throw new FormatException(channels.key() + " is " + channels.type() + ", not UINT32");
        }
        long cin = channels == null ? 3 : Integer.toUnsignedLong((Integer) channels.value());
        e.splitTemporal("v.patch_embed.weight", "v.patch_embd.weight", "v.patch_embd.weight.1", cin);   // register_qwen3vl_patch_embed_split
        for (String[] r : new String[][] {{"v.merger.norm.weight", "v.post_ln.weight"}, {"v.merger.norm.bias", "v.post_ln.bias"},
                {"v.merger.linear_fc1.weight", "mm.0.weight"}, {"v.merger.linear_fc1.bias", "mm.0.bias"},
                {"v.merger.linear_fc2.weight", "mm.2.weight"}, {"v.merger.linear_fc2.bias", "mm.2.bias"},
                {"v.patch_embed.bias", "v.patch_embd.bias"}, {"v.pos_embed.weight", "v.position_embd.weight"}}) {
            e.rename(r[0], r[1]);
        }
        for (int i = 0; i < deepstack.size(); i++) {  // v.deepstack_merger.X.* -> v.deepstack.<indexes[X]>.*
            for (String[] leaf : new String[][] {{"norm", "norm"}, {"linear_fc1", "fc1"}, {"linear_fc2", "fc2"}}) {
                for (String suffix : new String[] {"weight", "bias"}) {
                    e.rename("v.deepstack_merger." + i + "." + leaf[0] + "." + suffix, "v.deepstack." + deepstack.get(i) + "." + leaf[1] + "." + suffix);
                }
            }
        }
        for (String[] r : new String[][] {{".norm1", ".ln1"}, {".norm2", ".ln2"}, {".mlp.linear_fc1", ".ffn_up"}, {".mlp.linear_fc2", ".ffn_down"}}) {
            e.renameContaining(r[0], r[1]);
        }
        e.promoteToF32("v.position_embd.weight");
        for (String need : new String[] {"mm.0.weight", "mm.2.weight"}) {
            if (e.tensor(need) == null) {
                throw new FormatException("no " + need + " among the vision tensors");
            }
        }
        return e.build(name(), face());
    }

    /** {@code A.vision.deepstack_visual_indexes} as numbers (empty when absent); another element type is refused. */
    private static List<Long> deepstackIndexes(GgufKv kv) {
        if (kv == null) {
            return List.of();
        }
        if (!(kv.value() instanceof GgufArray arr) || (arr.elementType() != GgufValueType.INT32 && arr.elementType() != GgufValueType.UINT32)) {
            throw new FormatException(kv.key() + " is not an INT32 array");
        }
        return arr.values().stream().map(v -> (long) (Integer) v).toList();
    }
}
