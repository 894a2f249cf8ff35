package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgmlType;

/**
 * A tensor whose translated bytes are computed from the blob rather than sliced from it (docs/FORMATS.md
 * §12.1): the closed family of operations Ollama's compatibility layer applies at load time that the
 * handlers built so far need. A new operation is a new record here and its case in {@link TranslatedGguf}.
 */
public sealed interface TensorOp {

    /**
     * The stored tensor ({@code source} type, at the translated tensor info's offset in the blob) widened to
     * F32 element by element ({@code promote_tensor_to_f32} in Ollama's {@code llama-ollama-compat-util.cpp}).
     */
    record PromoteToF32(GgmlType source) implements TensorOp {}

    /**
     * The stored rows (F32, F16 or BF16, copied as they are) reordered by llama.cpp's q/k permutation over
     * {@code heads} heads ({@code LlamaModel.permute}, {@link dev.modelfs.arch.QkPermutation}): translated row
     * {@code r} is stored row {@code hfRowOf(r)}. Ollama's {@code register_mistral3_vision_qk_permute}.
     */
    record QkRowPermute(int heads) implements TensorOp {}
}
