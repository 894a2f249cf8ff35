package dev.modelfs.convert;

import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.quant.FloatFormat;

/**
 * A float type converted tensors are written in, with its names in each format and its variant name:
 * the folder its safetensors weights sit in ({@code bf16/model.safetensors}, docs/SEMANTICS.md "One
 * weight set per folder") and the infix of its GGUF ({@code model.bf16.gguf}).
 */
public enum OutputType {
    F32("fp32", Dtype.F32, FloatFormat.F32, 0),
    F16("fp16", Dtype.F16, FloatFormat.F16, 1),
    BF16("bf16", Dtype.BF16, FloatFormat.BF16, 32);

    public final String variant;
    public final Dtype dtype;
    /** The GGML type of {@link #dtype} ({@link ElementTypes}). */
    public final GgmlType ggml;
    /** The quant-level format conversions write. */
    public final FloatFormat format;
    public final int bytes;
    /** {@code general.file_type} (llama_ftype) of a GGUF whose quantized tensors are all this type. */
    public final int llamaFileType;

    /** {@code path} (relative to a model directory) inside this type's variant folder. */
    public String inFolder(String path) {
        return variant + "/" + path;
    }

    /** The output type whose GGML type is {@code t} (F32, F16 or BF16). */
    public static OutputType of(GgmlType t) {
        for (OutputType o : values()) {
            if (o.ggml == t) {
                return o;
            }
        }
        throw new IllegalArgumentException(t + " is not a float output type");
    }

    /** The output type whose variant folder is {@code variant} ({@code fp32}, {@code fp16}, {@code bf16}). */
    public static OutputType ofVariant(String variant) {
        for (OutputType o : values()) {
            if (o.variant.equals(variant)) {
                return o;
            }
        }
        throw new IllegalArgumentException(variant + " is not a variant folder");
    }

    OutputType(String variant, Dtype dtype, FloatFormat format, int llamaFileType) {
        this.variant = variant;
        this.dtype = dtype;
        this.ggml = ElementTypes.ggml(dtype).orElseThrow();
        this.format = format;
        this.bytes = format.bytes;
        this.llamaFileType = llamaFileType;
    }
}
