package dev.modelfs.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.quant.mlx.MlxMode;
import dev.modelfs.quant.mlx.MlxQuant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Decides how a quantized tensor is quantized (docs/FORMATS.md §4.5): per-tensor metadata, then blob
 * metadata, then, for a v0.14–v0.15 image import's {@code "data"} triple, the era's meaning of
 * {@code model_index.json}'s {@code quantization} ({@link LegacyImageQuant}), then the model's
 * config.json {@code quantization} section, then shape inference (ties broken by the config blob's
 * {@code file_type}, else by the layout's era). The first candidate whose shapes and dtypes are
 * consistent wins; none consistent means the tensor cannot be read.
 */
final class QuantResolver {
    private QuantResolver() {}

    /**
     * Everything known about one quantized tensor; {@code imageQuantization} is the
     * {@code model_index.json} {@code quantization} of an image model's component tensor, else null.
     */
    record Pieces(String key, StoredTensor main, StoredTensor scale, StoredTensor bias, StoredTensor globalScale,
                  Map<String, String> metadata, JsonNode configSection, String relativeName, String fileTypeHint,
                  boolean legacyData, String imageQuantization) {
        /** A {@code "data"} triple of an image model's component (v0.14–v0.15 image import). */
        boolean legacyImage() {
            return legacyData && imageQuantization != null;
        }
    }

    static MlxQuant resolve(Pieces p) {
        List<MlxQuant> candidates = new ArrayList<>();
        Map<String, String> md = p.metadata() == null ? Map.of() : p.metadata();
        addFromStrings(candidates, md.get(p.key() + ".quant_type"), md.get(p.key() + ".group_size"));
        addFromStrings(candidates, md.get("quant_type"), md.get("group_size"));
        if (p.legacyImage()) {
            MlxQuant era = LegacyImageQuant.of(p.imageQuantization());
            if (era != null) {
                candidates.add(era);
            }
        }
        addFromConfig(candidates, p.configSection(), p.relativeName());
        addInferred(candidates, p);
        for (MlxQuant q : candidates) {
            if (consistent(q, p)) {
                return q;
            }
        }
        return null;
    }

    private static void addFromStrings(List<MlxQuant> out, String type, String group) {
        if (type == null || type.isBlank()) {
            return;
        }
        try {
            out.add(MlxQuant.of(type, group == null ? null : Integer.valueOf(group.trim())));
        } catch (IllegalArgumentException e) {
            // unknown type or bad group: not a candidate
        }
    }

    private static void addFromConfig(List<MlxQuant> out, JsonNode section, String relativeName) {
        if (section == null || !section.isObject()) {
            return;
        }
        String module = relativeName.endsWith(".weight") ? relativeName.substring(0, relativeName.length() - 7) : relativeName;
        JsonNode specific = section.get(module);
        if (specific != null && specific.isObject()) {
            addFromConfigObject(out, specific);
        }
        addFromConfigObject(out, section);
    }

    private static void addFromConfigObject(List<MlxQuant> out, JsonNode q) {
        String mode = q.path("mode").asText("affine").toLowerCase(Locale.ROOT);
        int bits = q.path("bits").asInt(0);
        Integer group = q.has("group_size") ? q.get("group_size").asInt() : null;
        try {
            if (mode.equals("affine")) {
                if (bits > 0) {
                    out.add(MlxQuant.affine(bits, group == null ? 64 : group));
                }
            } else {
                out.add(MlxQuant.of(mode, group));
            }
        } catch (IllegalArgumentException e) {
            // not a valid combination
        }
    }

    private static void addInferred(List<MlxQuant> out, Pieces p) {
        long[] ws = p.main().shape();
        long[] ss = p.scale().shape();
        if (ws.length == 0 || ss.length == 0 || ss[ss.length - 1] == 0) {
            return;
        }
        long cols = ws[ws.length - 1];
        long sc = ss[ss.length - 1];
        if (p.scale().dtype() == Dtype.U8) {
            if (cols % sc != 0) {
                return;
            }
            long ratio = cols / sc;
            String mode = ratio == 2 ? "nvfp4" : ratio == 4 ? "mxfp4" : ratio == 8 ? "mxfp8" : null;
            if (mode != null) {
                out.add(MlxQuant.of(mode, null));
            }
            return;
        }
        String hint = p.fileTypeHint() == null ? "" : p.fileTypeHint().toLowerCase(Locale.ROOT);
        int hintBits = switch (hint) {
            case "q4", "int4", "fp4" -> 4;
            case "q8", "int8", "fp8" -> 8;
            // no hint: the era decides. Without metadata the int4/g64 vs int8/g32 tie comes only from
            // "data" triples (v0.14–v0.15: 8-bit g32 was the only such layout) or from v0.18.0–v0.18.2
            // packed expert blobs (int4 g64; their config blobs say file_type)
            default -> p.legacyData() ? 8 : 4;
        };
        long gs4 = cols * 8 % sc == 0 ? cols * 8 / sc : -1;
        long gs8 = cols * 4 % sc == 0 ? cols * 4 / sc : -1;
        if (gs4 == 32) {
            add(out, 4, gs4);
        } else if (gs8 == 64) {
            add(out, 8, gs8);
        } else if (gs4 == 64 && gs8 == 32) {
            if (hintBits == 8) {
                add(out, 8, 32);
                add(out, 4, 64);
            } else {
                add(out, 4, 64);
                add(out, 8, 32);
            }
        } else {
            boolean ok4 = List.of(16L, 32L, 64L, 128L).contains(gs4);
            boolean ok8 = List.of(16L, 32L, 64L, 128L).contains(gs8);
            if (ok4 && (!ok8 || hintBits == 4)) {
                add(out, 4, gs4);
            } else if (ok8) {
                add(out, 8, gs8);
            }
        }
    }

    private static void add(List<MlxQuant> out, int bits, long group) {
        try {
            out.add(MlxQuant.affine(bits, (int) group));
        } catch (IllegalArgumentException e) {
            // MLX does not allow this group size
        }
    }

    /** Whether the stored pieces can be this quantization. */
    static boolean consistent(MlxQuant q, Pieces p) {
        StoredTensor w = p.main();
        StoredTensor s = p.scale();
        if (w.dtype() != Dtype.U32) {
            return false;
        }
        long[] ws = w.shape();
        long[] ss = s.shape();
        if (ws.length == 0 || ws.length != ss.length) {
            return false;
        }
        for (int i = 0; i < ws.length - 1; i++) {
            if (ws[i] != ss[i]) {
                return false;
            }
        }
        long cols = ws[ws.length - 1];
        if (cols * 32 % q.bits() != 0) {
            return false;
        }
        long k = cols * 32 / q.bits();
        if (k % q.groupSize() != 0 || ss[ss.length - 1] != k / q.groupSize()) {
            return false;
        }
        boolean affine = q.mode() == MlxMode.AFFINE;
        if (affine) {
            if (!(s.dtype() == Dtype.BF16 || s.dtype() == Dtype.F16 || s.dtype() == Dtype.F32)) {
                return false;
            }
            StoredTensor b = p.bias();
            if (b == null || b.dtype() != s.dtype() || !java.util.Arrays.equals(b.shape(), ss)) {
                return false;
            }
        } else if (s.dtype() != Dtype.U8 || p.bias() != null) {
            return false;
        }
        StoredTensor g = p.globalScale();
        if (g != null && (q.mode() != MlxMode.NVFP4 || g.dtype() != Dtype.F32 || !globalScaleShape(ws, g.shape()))) {
            return false;
        }
        return true;
    }

    /**
     * Whether {@code global} is the shape of an nvfp4 global scale of a weight of shape {@code weight}
     * (docs/FORMATS.md §4.6): one element, or one per expert of a stacked weight ({@code [E, 1, 1]} for
     * {@code [E, out, in/8]}, as v0.22–v0.31.1 stacked compressed-tensors experts).
     */
    static boolean globalScaleShape(long[] weight, long[] global) {
        long n = 1;
        for (long d : global) {
            n *= d;
        }
        if (n == 1) {
            return true;
        }
        if (weight.length < 3 || global.length != weight.length || global[0] != weight[0]) {
            return false;
        }
        for (int i = 1; i < global.length; i++) {
            if (global[i] != 1) {
                return false;
            }
        }
        return true;
    }
}
