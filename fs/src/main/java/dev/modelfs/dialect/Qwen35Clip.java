package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.Collections;
import java.util.List;

/**
 * The vision tower and merger projector embedded in an Ollama {@code qwen35} / {@code qwen35moe} file, for
 * llama.cpp's clip loader ({@code mmproj.gguf}): Ollama's {@code handle_qwen35_like_clip} (docs/FORMATS.md §12.8),
 * step by step: the {@code ARCH.vision.*} keys copied to {@code clip.vision.*}, the published vision tower's
 * defaults injected (feed-forward 4304, image size 768, epsilon 1e-6, mean and std 0.5), an all-false
 * {@code is_deepstack_layers} mask, projector {@code qwen3vl_merger}; each block's separate {@code attn_q/k/v}
 * (weight and bias) stored one after another as {@code attn_qkv}; the Conv3D {@code v.patch_embed.weight}
 * (F16 {@code [w, h, 2, out * in]}) split into its two temporal slices {@code v.patch_embd.weight} and
 * {@code v.patch_embd.weight.1} (F32 {@code [w, h, in, out]}, computed per chunk); {@code kQwen35moeClipRenames};
 * {@code v.position_embd} promoted to F32.
 *
 * <p>Where modelfs differs from Ollama's in-memory view: the file holds only what a projector file holds (the text
 * and MTP tensors, the {@code ARCH.*} and {@code tokenizer.*} keys are left out), and
 * {@code clip.vision.num_channels} is not written (Ollama copies it for its own patch split; llama.cpp's converter
 * writes no such key and clip.cpp reads none): the channel count comes from {@code ARCH.vision.num_channels}
 * (3 when absent). A header without the vision keys llama.cpp's clip loader requires, or whose QKV or patch
 * embedding does not fit, is refused as a whole.
 */
public record Qwen35Clip() implements DialectHandler {
    /** The published vision tower's values, injected when missing (Ollama: "match the Qwen3.5-35B-A3B reference mmproj"). */
    static final int FEED_FORWARD = 4304;
    static final int IMAGE_SIZE = 768;
    static final float EPSILON = 1e-6f;
    /** {@code kQwen35moeClipRenames}, in Ollama's order (substring renames, first occurrence). */
    private static final String[][] RENAMES = {{"v.pos_embed", "v.position_embd"}, {"v.patch_embed", "v.patch_embd"},
        {"v.merger.norm", "v.post_ln"}, {"v.merger.linear_fc1", "mm.0"}, {"v.merger.linear_fc2", "mm.2"},
        {".mlp.linear_fc1", ".ffn_up"}, {".mlp.linear_fc2", ".ffn_down"}, {".norm1", ".ln1"}, {".norm2", ".ln2"}};

    @Override
    public String name() {
        return "qwen35 (clip)";
    }

    @Override
    public Face face() {
        return Face.CLIP;
    }

    /** {@code translate_clip_metadata}: some {@code v.*} tensor, then {@code detect_ollama_qwen35moe} or {@code detect_ollama_qwen35}. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.anyTensorWithPrefix(g, "v.") && (new Qwen35Moe().matches(g) || new Qwen35().matches(g));
    }

    @Override
    public Translation translate(GgufFile g) {
        String arch = Markers.architecture(g, "qwen35moe") ? "qwen35moe" : "qwen35";
        HeaderEdit e = new HeaderEdit(g);
        for (String k : new String[] {"block_count", "embedding_length", "attention.head_count", "patch_size", "spatial_merge_size"}) {
            e.copy(arch + ".vision." + k, "clip.vision." + k, GgufValueType.UINT32);
        }
        e.copy(arch + ".embedding_length", "clip.vision.projection_dim", GgufValueType.UINT32);
        e.inject("clip.vision.feed_forward_length", GgufValueType.UINT32, FEED_FORWARD);
        e.inject("clip.vision.image_size", GgufValueType.UINT32, IMAGE_SIZE);
        e.inject("clip.vision.attention.layer_norm_epsilon", GgufValueType.FLOAT32, EPSILON);
        GgufArray half = new GgufArray(GgufValueType.FLOAT32, List.of(0.5f, 0.5f, 0.5f));
        e.inject("clip.vision.image_mean", GgufValueType.ARRAY, half);
        e.inject("clip.vision.image_std", GgufValueType.ARRAY, half);
        for (String required : new String[] {"clip.vision.block_count", "clip.vision.embedding_length", "clip.vision.attention.head_count",
                "clip.vision.patch_size", "clip.vision.projection_dim"}) {
            if (!e.has(required)) {
                throw new FormatException("no " + required + " (" + arch + ".vision.* incomplete)");
            }
        }
        GgufKv blockCount = e.kv("clip.vision.block_count");
        if (blockCount.type() != GgufValueType.UINT32) {
            throw new FormatException("clip.vision.block_count is " + blockCount.type() + ", not UINT32");
        }
        long blocks = Integer.toUnsignedLong((Integer) blockCount.value());
        if (blocks == 0 || blocks > 4096) {
            throw new FormatException("clip.vision.block_count " + blocks + " out of range");
        }
        if (!e.has("clip.vision.is_deepstack_layers")) {   // qwen3.5 has none, but the mask must match the block count
            e.set("clip.vision.is_deepstack_layers", GgufValueType.ARRAY,
                    new GgufArray(GgufValueType.BOOL, Collections.nCopies((int) blocks, false)));
        }
        e.inject("clip.has_vision_encoder", GgufValueType.BOOL, true);
        e.inject("clip.use_gelu", GgufValueType.BOOL, true);
        e.set("clip.projector_type", GgufValueType.STRING, "qwen3vl_merger");
        e.set("general.architecture", GgufValueType.STRING, "clip");
        e.removeWithPrefix(arch + ".", "tokenizer.");
        e.keepOnlyPrefixes("text model (served in model.gguf)", "v.", "mm.");
        for (long b = 0; b < blocks; b++) {          // register_qwen35moe_qkv_merge, before the renames
            String p = "v.blk." + b + ".attn_";
            if (e.tensor(p + "q.weight") == null) {
                continue;                            // no vision block at this index
            }
            e.concatSlowest(List.of(p + "q.weight", p + "k.weight", p + "v.weight"), p + "qkv.weight");
            if (e.tensor(p + "q.bias") != null) {
                e.concatSlowest(List.of(p + "q.bias", p + "k.bias", p + "v.bias"), p + "qkv.bias");
            }
        }
        GgufKv channels = g.kv(arch + ".vision.num_channels");
        if (channels != null && channels.type() != GgufValueType.UINT32) {
            throw new FormatException(channels.key() + " is " + channels.type() + ", not UINT32");
        }
        long cin = channels == null ? 3 : Integer.toUnsignedLong((Integer) channels.value());
        e.splitTemporal("v.patch_embed.weight", "v.patch_embd.weight", "v.patch_embd.weight.1", cin);
        for (String[] r : RENAMES) {
            e.renameContaining(r[0], r[1]);
        }
        e.promoteToF32("v.position_embd.weight");
        return e.build(name(), face());
    }
}
