package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * DeepSeek-OCR as Ollama's converter writes it ({@code convert/convert_deepseekocr.go}), for llama.cpp's text loader:
 * Ollama's {@code detect_ollama_deepseekocr} / {@code handle_deepseekocr} (docs/FORMATS.md §12.18). The text tensors
 * already have llama.cpp's {@code deepseek2-ocr} names (DeepSeek-V2 without MLA: {@code attn_q/k/v}, stacked experts,
 * shared experts); the edits, in Ollama's order: architecture {@code deepseek2-ocr}; every {@code deepseekocr.*} key
 * copied to {@code deepseek2-ocr.*} (the source keys stay, unread); the RMS-norm epsilon 1e-6 when missing;
 * {@code expert_feed_forward_length} from {@code ne[0]} of {@code blk.1.ffn_down_exps.weight} (block 0 is the dense
 * one) and {@code expert_shared_count} from {@code ne[0]} of {@code blk.1.ffn_down_shexp.weight} divided by it, each
 * when missing; the SAM encoder ({@code s.*}), the CLIP tower ({@code v.*}) and the projector ({@code mm.*}) left out
 * (served in {@code mmproj.gguf}, {@link DeepseekOcrClip}).
 *
 * <p>Where modelfs is stricter than Ollama's layer: llama.cpp's {@code deepseek2-ocr} loader requires both expert
 * keys, so a header that lacks a key and the tensor it is derived from (or whose shared-expert width is not a whole
 * number of expert widths) is refused as a whole instead of translated into a file llama.cpp cannot load.
 */
public record DeepseekOcrText() implements DialectHandler {
    static final String ARCH = "deepseekocr";
    static final String SRC = "deepseekocr.";
    static final String DST = "deepseek2-ocr.";

    @Override
    public String name() {
        return "deepseekocr";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_deepseekocr}: the architecture (llama.cpp has none of that name). */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture(ARCH, "deepseek2-ocr");
        e.inject(DST + "attention.layer_norm_rms_epsilon", GgufValueType.FLOAT32, 1e-6f);
        String ffKey = DST + "expert_feed_forward_length";
        if (!e.has(ffKey)) {
            GgufTensorInfo down = g.tensor("blk.1.ffn_down_exps.weight");
            if (down == null) {
                throw new FormatException("no " + ffKey + " and no blk.1.ffn_down_exps.weight to derive it from");
            }
            e.set(ffKey, GgufValueType.UINT32, (int) down.ne()[0]);
        }
        String sharedKey = DST + "expert_shared_count";
        if (!e.has(sharedKey)) {
            GgufTensorInfo shexp = g.tensor("blk.1.ffn_down_shexp.weight");
            long ff = u32(e.kv(ffKey));
            if (shexp == null || ff <= 0 || shexp.ne()[0] % ff != 0) {
                throw new FormatException("no " + sharedKey + " and no blk.1.ffn_down_shexp.weight of a whole number of experts of "
                        + ff + " to derive it from");
            }
            e.set(sharedKey, GgufValueType.UINT32, (int) (shexp.ne()[0] / ff));
        }
        e.dropWithPrefix("s.", "SAM encoder (served in mmproj.gguf)");
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        return e.build(name(), face());
    }

    /** A UINT32 KV as a long; another type is refused ({@code gguf_get_val_u32} asserts the type). */
    static long u32(GgufKv kv) {
        if (kv.type() != GgufValueType.UINT32) {
            throw new FormatException(kv.key() + " is " + kv.type() + ", not UINT32");
        }
        return Integer.toUnsignedLong((Integer) kv.value());
    }
}
