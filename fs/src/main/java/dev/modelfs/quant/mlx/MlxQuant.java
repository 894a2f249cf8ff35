package dev.modelfs.quant.mlx;

import java.util.Locale;
import java.util.Objects;

/**
 * Validated MLX quantization parameters (docs/FORMATS.md §5.1): affine bits ∈ {2,3,4,5,6,8} with group
 * size ∈ {32,64,128}; nvfp4 4 bits, group 16; mxfp4 4 bits, group 32; mxfp8 8 bits, group 32.
 */
public record MlxQuant(MlxMode mode, int bits, int groupSize) {

    public MlxQuant {
        Objects.requireNonNull(mode, "mode");
        boolean ok = switch (mode) {
            case AFFINE -> (bits == 2 || bits == 3 || bits == 4 || bits == 5 || bits == 6 || bits == 8)
                    && (groupSize == 32 || groupSize == 64 || groupSize == 128);
            case NVFP4 -> bits == 4 && groupSize == 16;
            case MXFP4 -> bits == 4 && groupSize == 32;
            case MXFP8 -> bits == 8 && groupSize == 32;
        };
        if (!ok) {
            throw new IllegalArgumentException("unsupported MLX quantization: mode " + mode + ", bits " + bits
                    + ", group size " + groupSize);
        }
    }

    /**
     * From a metadata {@code quant_type} string (case-insensitive, trimmed; aliases int4/fp4/q4 → affine 4,
     * int8/fp8/q8 → affine 8, nvfp4, mxfp4, mxfp8) and an optional group size (null → the type's default:
     * 64 for int4/int8, 16 nvfp4, 32 mxfp4/mxfp8).
     *
     * @throws IllegalArgumentException for an unknown type or an invalid group size
     */
    public static MlxQuant of(String quantType, Integer groupSize) {
        if (quantType == null) throw new IllegalArgumentException("quant_type is null");
        String t = quantType.strip().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "int4", "fp4", "q4" -> affine(4, groupSize == null ? 64 : groupSize);
            case "int8", "fp8", "q8" -> affine(8, groupSize == null ? 64 : groupSize);
            case "nvfp4" -> new MlxQuant(MlxMode.NVFP4, 4, groupSize == null ? 16 : groupSize);
            case "mxfp4" -> new MlxQuant(MlxMode.MXFP4, 4, groupSize == null ? 32 : groupSize);
            case "mxfp8" -> new MlxQuant(MlxMode.MXFP8, 8, groupSize == null ? 32 : groupSize);
            default -> throw new IllegalArgumentException("unknown MLX quant_type '" + quantType + "'");
        };
    }

    /** Affine quantization with the given bits and group size. */
    public static MlxQuant affine(int bits, int groupSize) {
        return new MlxQuant(MlxMode.AFFINE, bits, groupSize);
    }

    /** Bytes of packed codes per group: {@code groupSize * bits / 8}. */
    public int codeBytesPerGroup() {
        return groupSize * bits / 8;
    }

    /** {@code int4}/{@code int8} for affine 4/8, {@code affine<bits>} for other affine widths, else the mode name. */
    public String canonicalName() {
        return switch (mode) {
            case AFFINE -> bits == 4 ? "int4" : bits == 8 ? "int8" : "affine" + bits;
            case NVFP4 -> "nvfp4";
            case MXFP4 -> "mxfp4";
            case MXFP8 -> "mxfp8";
        };
    }
}
