package dev.modelfs.model;

import dev.modelfs.quant.mlx.MlxQuant;
import java.util.Locale;

/**
 * What Ollama's v0.14–v0.15 image importer meant by the {@code quantization} it wrote into
 * {@code model_index.json} (docs/FORMATS.md §4.3 E, §4.5): that era stored quantized tensors as
 * {@code "data"}-keyed {@code name}/{@code name_scale}/{@code name_qbias} layers with no metadata,
 * so this key is the only record of the type.
 *
 * <ul>
 *   <li>{@code FP8} (v0.14.0–v0.15.4): MLX affine 8-bit, group 32 ({@code x/imagegen/client/quantize.go}
 *       at v0.14.2, {@code x/create/client/quantize.go} at v0.15.4) — not an FP8 format and not the
 *       group 64 that the alias {@code FP8 → int8} gives today;</li>
 *   <li>{@code FP4} (v0.14.3–v0.15.4): affine 4-bit, group 32;</li>
 *   <li>{@code Q4} / {@code Q8} (v0.15.5–v0.15.6): affine 4-bit g32 / 8-bit g64;</li>
 *   <li>{@code NVFP4} (g16) and {@code MXFP8} (g32) (v0.15.5–v0.15.6).</li>
 * </ul>
 * Anything else (a torch dtype such as {@code BF16}, or the v0.16+ names whose blobs carry metadata)
 * is no statement about legacy tensors: {@link #of} returns null.
 */
public final class LegacyImageQuant {
    private LegacyImageQuant() {}

    /** The quantization a v0.14–v0.15 image import's {@code model_index.json} value stands for, or null. */
    public static MlxQuant of(String quantization) {
        if (quantization == null) {
            return null;
        }
        return switch (quantization.trim().toUpperCase(Locale.ROOT)) {
            case "FP8" -> MlxQuant.affine(8, 32);
            case "FP4", "Q4" -> MlxQuant.affine(4, 32);
            case "Q8" -> MlxQuant.affine(8, 64);
            case "NVFP4" -> MlxQuant.of("nvfp4", 16);
            case "MXFP8" -> MlxQuant.of("mxfp8", 32);
            default -> null;
        };
    }
}
