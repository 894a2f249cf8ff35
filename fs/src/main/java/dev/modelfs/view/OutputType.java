package dev.modelfs.view;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.quant.FloatCasts;
import java.lang.foreign.MemorySegment;

/**
 * A float type converted tensors are written in, with its names in each format and the file-name
 * variant (HF's {@code variant=} convention: {@code model.bf16.safetensors}).
 */
public enum OutputType {
    F32("fp32", Dtype.F32, GgmlType.F32, 4, 0),
    F16("fp16", Dtype.F16, GgmlType.F16, 2, 1),
    BF16("bf16", Dtype.BF16, GgmlType.BF16, 2, 32);

    public final String variant;
    public final Dtype dtype;
    public final GgmlType ggml;
    public final int bytes;
    /** {@code general.file_type} (llama_ftype) of a GGUF whose quantized tensors are all this type. */
    public final int llamaFileType;

    OutputType(String variant, Dtype dtype, GgmlType ggml, int bytes, int llamaFileType) {
        this.variant = variant;
        this.dtype = dtype;
        this.ggml = ggml;
        this.bytes = bytes;
        this.llamaFileType = llamaFileType;
    }

    /** Narrows {@code count} LE f32 values (one rounding to nearest even). */
    void fromF32(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        switch (this) {
            case F32 -> MemorySegment.copy(src, srcOff, dst, dstOff, count * 4);
            case F16 -> FloatCasts.f32ToF16(src, srcOff, dst, dstOff, count);
            case BF16 -> FloatCasts.f32ToBf16(src, srcOff, dst, dstOff, count);
        }
    }
}
