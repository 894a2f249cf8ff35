package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * GLM-OCR as Ollama's converter wrote it ({@code convert/convert_glmocr.go}), for llama.cpp's text loader: Ollama's
 * {@code detect_ollama_glmocr} and {@code handle_glmocr} (docs/FORMATS.md §12.15). The architecture {@code glmocr}
 * becomes llama.cpp's {@code glm4} (every {@code glmocr.*} key copied to {@code glm4.*}, the old keys stay); the
 * three-element {@code rope.mrope_section} becomes the four-element {@code rope.dimension_sections} llama.cpp's M-RoPE
 * reads; {@code rope.dimension_count} is injected; the pre-tokenizer is {@code chatglm-bpe}; three tensor leaves get
 * llama.cpp's names ({@code attn_out}, {@code post_attn_norm}, {@code post_ffn_norm}); each block's separate
 * {@code ffn_gate} and {@code ffn_up} (Ollama's converter split HF's fused {@code gate_up_proj}) are stored one after
 * another as llama.cpp's fused {@code ffn_up} of twice the rows (gate first: blob slices, no data converted); the vision
 * tower and projector ({@code v.*}, {@code mm.*}) are left out. The q/k rows are already in llama.cpp's NeoX order
 * (Ollama's converter permuted them as llama.cpp's does).
 *
 * <p>Where modelfs differs from Ollama's handler: {@code rope.dimension_count} is the key length times
 * {@code rope.partial_rotary_factor} when the file has that factor (llama.cpp's converter's value; Ollama takes the key
 * length, the same for GLM-OCR's factor 1). Refused as a whole: an {@code mrope_section} that is not an integer array
 * of three or more elements, a key length or rotary factor of another type, a factor outside (0, 1], a block count above
 * 4096, or a block whose {@code ffn_gate} has no {@code ffn_up} of the same type and shape.
 */
public record GlmOcrText() implements DialectHandler {
    static final String ARCH = "glmocr";
    private static final String P = ARCH + ".";
    /** handle_glmocr's default when {@code block_count} is missing (GLM-OCR's 16 layers). */
    static final long DEFAULT_BLOCKS = 16;
    static final long MAX_BLOCKS = 4096;

    @Override
    public String name() {
        return "glmocr";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_glmocr}: the architecture alone (llama.cpp loads GLM-OCR as {@code glm4}). */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture(ARCH, "glm4");
        GgufKv mrope = g.kv(P + "rope.mrope_section");
        if (mrope != null) {
            e.set("glm4.rope.dimension_sections", GgufValueType.ARRAY, dimensionSections(mrope));
        }
        if (!e.has("glm4.rope.dimension_count") && g.kv(P + "attention.key_length") != null) {
            e.set("glm4.rope.dimension_count", GgufValueType.UINT32, ropeDimensions(g));
        }
        GgufKv pre = g.kv("tokenizer.ggml.pre");
        if (pre != null) {
            e.set("tokenizer.ggml.pre", GgufValueType.STRING, "chatglm-bpe");
        }
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        e.renameContaining(".attn_out.", ".attn_output.");
        e.renameContaining(".post_attn_norm.", ".post_attention_norm.");
        e.renameContaining(".post_ffn_norm.", ".post_ffw_norm.");
        long blocks = g.kv(P + "block_count") == null ? DEFAULT_BLOCKS : Markers.u32(g, P + "block_count");
        if (blocks < 0 || blocks > MAX_BLOCKS) {
            throw new FormatException(P + "block_count is not a block count up to " + MAX_BLOCKS);
        }
        for (long b = 0; b < blocks; b++) {   // register_glm4_ffn_concat: gate rows first, then up rows
            String gate = "blk." + b + ".ffn_gate.weight";
            String up = "blk." + b + ".ffn_up.weight";
            if (e.tensor(gate) == null) {
                continue;
            }
            if (e.tensor(up) == null) {
                throw new FormatException(gate + " has no " + up + " to be fused with");
            }
            e.concatSlowest(List.of(gate, up), up);
        }
        return e.build(name(), face());
    }

    /** handle_glmocr's {@code padded}: the first three sections and a 0, as INT32. */
    static GgufArray dimensionSections(GgufKv mrope) {
        if (!(mrope.value() instanceof GgufArray a) || a.values().size() < 3
                || (a.elementType() != GgufValueType.INT32 && a.elementType() != GgufValueType.UINT32)) {
            throw new FormatException(P + "rope.mrope_section is not an integer array of 3 or more elements");
        }
        return new GgufArray(GgufValueType.INT32, List.of(a.values().get(0), a.values().get(1), a.values().get(2), 0));
    }

    /** The rotary width: the key length (UINT32) times {@code rope.partial_rotary_factor} (FLOAT32, 1 when absent). */
    static int ropeDimensions(GgufFile g) {
        GgufKv key = g.kv(P + "attention.key_length");
        if (key.type() != GgufValueType.UINT32) {
            throw new FormatException(P + "attention.key_length is " + key.type() + ", not UINT32");
        }
        float factor = 1f;
        GgufKv f = g.kv(P + "rope.partial_rotary_factor");
        if (f != null) {
            if (f.type() != GgufValueType.FLOAT32) {
                throw new FormatException(P + "rope.partial_rotary_factor is " + f.type() + ", not FLOAT32");
            }
            factor = (Float) f.value();
            if (!(factor > 0f && factor <= 1f)) {
                throw new FormatException(P + "rope.partial_rotary_factor " + factor + " is not in (0, 1]");
            }
        }
        return (int) (Integer.toUnsignedLong((Integer) key.value()) * factor);
    }
}
