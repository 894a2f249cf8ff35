package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgmlType;
import java.util.List;

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
     * The stored tensor ({@code source} type) widened to F32 and {@code shift} added to every element, in F32
     * ({@code register_qwen35_norm_shift_load}, "F32 add-one norm shift": an MTP norm stored as {@code w},
     * which llama.cpp reads as {@code 1 + w}).
     */
    record ShiftToF32(GgmlType source, float shift) implements TensorOp {}

    /**
     * Other tensors of the blob stored one after another, byte for byte ({@code register_concat_load}): the
     * per-expert tensors of one layer stacked into llama.cpp's {@code ffn_*_exps} tensor. {@code offsets} are
     * relative to the blob's data start, in output order, each source {@code bytesEach} long; the first is the
     * translated tensor info's own offset. No data is converted: the tensor is a run of blob slices.
     */
    record Concat(List<String> from, List<Long> offsets, long bytesEach) implements TensorOp {
        public Concat {
            from = List.copyOf(from);
            offsets = List.copyOf(offsets);
            if (from.size() != offsets.size() || from.isEmpty() || bytesEach <= 0) {
                throw new IllegalArgumentException("a concatenation needs one offset per source and a positive size");
            }
        }
    }

    /**
     * The stored rows (F32, F16 or BF16, copied as they are) reordered by llama.cpp's q/k permutation over
     * {@code heads} heads ({@code LlamaModel.permute}, {@link dev.modelfs.arch.QkPermutation}): translated row
     * {@code r} is stored row {@code hfRowOf(r)}. Ollama's {@code register_mistral3_vision_qk_permute}.
     */
    record QkRowPermute(int heads) implements TensorOp {}

    /**
     * One temporal slice of a Conv3D patch embedding stored in F16 as {@code [w, h, frames, units]} (each unit one
     * {@code (out, in)} channel pair, HF's row-major flattening), widened to F32 as {@code [w, h, units]}: output
     * unit {@code u} is the {@code hw} elements at source unit {@code slice + frames * u}
     * ({@code register_qwen35moe_patch_embed_split}'s slice load op). Computed per chunk of whole units.
     */
    record TemporalSlice(int slice, long hw, long frames, long units) implements TensorOp {
        public TemporalSlice {
            if (slice < 0 || slice >= frames || hw <= 0 || units <= 0) {
                throw new IllegalArgumentException("slice " + slice + " of " + frames + " frames, " + hw + " x " + units);
            }
        }
    }

    /**
     * A square table of {@code sourceSide²} positions of {@code embedding} values (F16, BF16 or F32, position-major:
     * {@code [embedding, sourceSide²]}) resampled to {@code targetSide²} positions in F32, bilinearly with aligned
     * corners ({@code register_nemotron3_position_embedding}; what llama.cpp's converter does with
     * {@code F.interpolate(..., mode="bilinear", align_corners=True)}). Computed per chunk of whole output positions,
     * each from the (at most four) source positions around it.
     */
    record BilinearSquare(GgmlType source, long embedding, long sourceSide, long targetSide) implements TensorOp {
        public BilinearSquare {
            if (embedding <= 0 || sourceSide <= 0 || targetSide <= 0) {
                throw new IllegalArgumentException("a table of " + sourceSide + "² x " + embedding + " to " + targetSide + "²");
            }
        }
    }
}
