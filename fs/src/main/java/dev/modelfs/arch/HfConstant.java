package dev.modelfs.arch;

/**
 * A Hugging Face tensor of one constant value that the GGUF does not hold (GGUF → Hugging Face only, docs/FORMATS.md §7.3):
 * the converter wrote none because the checkpoint had none, llama.cpp treats it as absent (the same values), and the
 * Hugging Face class would otherwise report it missing and initialize it. Gemma 4's {@code router.per_expert_scale} of
 * ones ({@link Gemma4Experts}).
 *
 * <p>Invariants: {@code hf} is the whole HF name; {@code dtypeOf} is a GGUF tensor of the file (with suffix) that the tensor
 * is written like (its dtype in {@code model.safetensors}); {@code shape} is row-major with positive dimensions (copied).
 */
public record HfConstant(String hf, String dtypeOf, long[] shape, float value) {
    public HfConstant {
        shape = shape.clone();
        for (long d : shape) {
            if (d <= 0) {
                throw new IllegalArgumentException(hf + ": dimension " + d);
            }
        }
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }
}
