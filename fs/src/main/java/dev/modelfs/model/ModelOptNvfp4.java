package dev.modelfs.model;

import dev.modelfs.format.safetensors.Dtype;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * NVIDIA ModelOpt NVFP4 tensors stored under their source names (docs/FORMATS.md §4.3 D′): a weight
 * {@code <b>.weight} (U8 {@code [..., K/2]}, two E2M1 codes a byte), its block scale
 * {@code <b>.weight_scale} ({@code F8_E4M3} or U8 {@code [..., K/16]}), an optional global scale
 * {@code <b>.weight_scale_2} (one F32) and an activation scale {@code <b>.input_scale}, each possibly
 * in its own blob. Ollama before v0.22.0 passed such checkpoints through unchanged, and its runner
 * still reads the names ({@code x/mlxrunner/model/linear.go}). They are fused here into the form
 * Ollama's importer writes since v0.22.0 ({@code x/create/prequant.go}, pattern
 * {@code modelopt-nvfp4}): the weight relabelled U32 {@code [..., K/8]} (bytes unchanged), the scale
 * relabelled U8, {@code weight_scale_2} as the global scale, {@code input_scale} dropped.
 *
 * <p>Invariant: a weight is fused only when the dtypes and shapes are exactly those of nvfp4 group 16
 * (same leading dimensions, {@code K/8 = 2 × K/16}); anything else is left as ordinary tensors.
 */
final class ModelOptNvfp4 {
    private static final String WEIGHT = ".weight";

    private ModelOptNvfp4() {}

    /** Fuses every ModelOpt quadruple of {@code found} in place (companions removed). */
    static void fuse(List<FoundTensor> found) {
        Map<String, Integer> plain = new HashMap<>();
        for (int i = 0; i < found.size(); i++) {
            if (found.get(i).scale() == null) {
                plain.putIfAbsent(found.get(i).logicalName(), i);
            }
        }
        Set<Integer> consumed = new HashSet<>();
        for (int i = 0; i < found.size(); i++) {
            FoundTensor f = found.get(i);
            if (f.scale() != null || !f.logicalName().endsWith(WEIGHT) || consumed.contains(i)) {
                continue;
            }
            String base = f.logicalName().substring(0, f.logicalName().length() - WEIGHT.length());
            Integer si = plain.get(base + ".weight_scale");
            StoredTensor codes = codes(f.main());
            if (si == null || codes == null || !blockScale(codes, found.get(si).main())) {
                continue;
            }
            StoredTensor s = found.get(si).main();
            StoredTensor scale = new StoredTensor(s.key(), Dtype.U8, s.shape(), s.bytes());
            Integer gi = scalarF32(found, plain.get(base + ".weight_scale_2"));
            Integer ii = scalarF32(found, plain.get(base + ".input_scale"));
            found.set(i, f.with(codes, scale, null, gi == null ? null : found.get(gi).main()));
            consumed.add(si);
            if (gi != null) {
                consumed.add(gi);
            }
            if (ii != null) {
                consumed.add(ii);
            }
        }
        FoundTensor.removeAll(found, consumed);
    }

    /** The weight as U32 words: a U8 weight relabelled ({@code [..., n]} → {@code [..., n/4]}), a U32 one as is. */
    private static StoredTensor codes(StoredTensor w) {
        long[] shape = w.shape();
        if (shape.length == 0) {
            return null;
        }
        if (w.dtype() == Dtype.U32) {
            return w;
        }
        if (w.dtype() != Dtype.U8 || shape[shape.length - 1] % 4 != 0) {
            return null;
        }
        shape[shape.length - 1] /= 4;
        return new StoredTensor(w.key(), Dtype.U32, shape, w.bytes());
    }

    /** Whether {@code s} is an E4M3 block scale of group 16 for the U32 codes {@code w}. */
    private static boolean blockScale(StoredTensor w, StoredTensor s) {
        if (s.dtype() != Dtype.U8 && s.dtype() != Dtype.F8_E4M3) {
            return false;
        }
        long[] ws = w.shape();
        long[] ss = s.shape();
        if (ws.length != ss.length) {
            return false;
        }
        for (int d = 0; d < ws.length - 1; d++) {
            if (ws[d] != ss[d]) {
                return false;
            }
        }
        return ss[ss.length - 1] > 0 && ws[ws.length - 1] == 2 * ss[ss.length - 1];
    }

    private static Integer scalarF32(List<FoundTensor> found, Integer i) {
        if (i == null) {
            return null;
        }
        StoredTensor t = found.get(i).main();
        return t.dtype() == Dtype.F32 && t.numel() == 1 ? i : null;
    }
}
