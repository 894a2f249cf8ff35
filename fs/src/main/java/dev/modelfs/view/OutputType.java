package dev.modelfs.view;

import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.quant.FloatCasts;
import java.lang.foreign.MemorySegment;

/**
 * A float type converted tensors are written in, with its names in each format and the file-name
 * variant (HF's {@code variant=} convention: {@code model.bf16.safetensors}).
 */
public enum OutputType {
    F32("fp32", Dtype.F32, 4, 0),
    F16("fp16", Dtype.F16, 2, 1),
    BF16("bf16", Dtype.BF16, 2, 32);

    public final String variant;
    public final Dtype dtype;
    /** The GGML type of {@link #dtype} ({@link ElementTypes}). */
    public final GgmlType ggml;
    public final int bytes;
    /** {@code general.file_type} (llama_ftype) of a GGUF whose quantized tensors are all this type. */
    public final int llamaFileType;

    OutputType(String variant, Dtype dtype, int bytes, int llamaFileType) {
        this.variant = variant;
        this.dtype = dtype;
        this.ggml = ElementTypes.ggml(dtype).orElseThrow();
        this.bytes = bytes;
        this.llamaFileType = llamaFileType;
    }

    /**
     * Writes {@code count} LE f32 values from native scratch {@code f32} to the start of {@code dst}
     * in this type (one rounding to nearest even); the cast runs native to native, then one bulk copy.
     */
    void narrowInto(MemorySegment f32, long count, MemorySegment dst) {
        switch (this) {
            case F32 -> MemorySegment.copy(f32, 0, dst, 0, count * 4);
            case F16 -> {
                MemorySegment tmp = Scratch.narrow(count * 2);
                FloatCasts.f32ToF16(f32, 0, tmp, 0, count);
                MemorySegment.copy(tmp, 0, dst, 0, count * 2);
            }
            case BF16 -> {
                MemorySegment tmp = Scratch.narrow(count * 2);
                FloatCasts.f32ToBf16(f32, 0, tmp, 0, count);
                MemorySegment.copy(tmp, 0, dst, 0, count * 2);
            }
        }
    }
}
