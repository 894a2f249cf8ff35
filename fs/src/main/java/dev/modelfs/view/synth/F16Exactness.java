package dev.modelfs.view.synth;

import static dev.modelfs.format.LittleEndian.F32;
import static dev.modelfs.format.LittleEndian.I16;

import dev.modelfs.cache.MappedPages;
import dev.modelfs.cache.NativeFile;
import dev.modelfs.cache.TruncatedMapping;
import dev.modelfs.model.LogicalTensor;
import dev.modelfs.model.StoredTensor;
import dev.modelfs.quant.FloatCasts;
import dev.modelfs.store.Digest;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * Whether every scale and bias of an affine MLX tensor is exactly an f16 value, so that the tensor
 * can be re-labelled as GGUF {@code Q4_1} without changing a value (docs/FORMATS.md §7.5). F16 scales
 * are exact by definition; BF16 and F32 ones are read (through a short-lived mapping of the range
 * only) and checked value by value: finite, and {@code f16(v)} converts back to exactly {@code v}.
 *
 * <p>Invariants: the answer for one stored range is computed once per process (blobs are immutable,
 * keyed by digest and range); a blob that cannot be read answers false (the tensor is then planned as
 * dequantized, and its reads fail with the blob's own error).
 */
final class F16Exactness {
    private static final Logger LOG = Logger.getLogger(F16Exactness.class.getName());
    private static final Map<String, Boolean> MEMO = new ConcurrentHashMap<>();

    private F16Exactness() {}

    /** True if {@code t}'s scales and biases are all f16-exact. */
    static boolean check(OllamaStore store, LogicalTensor t) {
        return t.scale() != null && t.bias() != null && exact(store, t.scale()) && exact(store, t.bias());
    }

    private static boolean exact(OllamaStore store, StoredTensor s) {
        return switch (s.dtype()) {
            case F16 -> true;
            case BF16, F32 -> MEMO.computeIfAbsent(s.bytes().blob() + ":" + s.bytes().offset() + ":" + s.bytes().length() + ":" + s.dtype(),
                    k -> scan(store, s));
            default -> false;
        };
    }

    private static boolean scan(OllamaStore store, StoredTensor s) {
        Digest d = s.bytes().blob();
        try (NativeFile f = store.openBlob(d); Arena arena = Arena.ofConfined()) {
            long size = f.stat().size();
            if (size != s.bytes().blobSize() || s.bytes().length() == 0) {
                return s.bytes().length() == 0;
            }
            MemorySegment seg = f.map(size, arena).asSlice(s.bytes().offset(), s.bytes().length());
            boolean bf16 = s.dtype() == dev.modelfs.format.safetensors.Dtype.BF16;
            long n = bf16 ? seg.byteSize() / 2 : seg.byteSize() / 4;
            MappedPages.populate(seg, 0, seg.byteSize());    // from native code: a stalled disk holds this thread alone
            try {
                for (long i = 0; i < n; i++) {
                    float v = bf16 ? FloatCasts.bf16ToF32(seg.get(I16, 2 * i)) : seg.get(F32, 4 * i);
                    if (!exactInF16(v)) {
                        return false;
                    }
                }
            } catch (InternalError e) {
                throw TruncatedMapping.of(d.shortId() + " while checking scales", e);
            }
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.fine(d.shortId() + ": cannot check scales for f16 exactness: " + e);
            return false;
        }
    }

    /** {@code v} is finite and equal, bit for bit, to its f16 rounding. */
    static boolean exactInF16(float v) {
        return Float.isFinite(v) && Float.floatToRawIntBits(Float.float16ToFloat(Float.floatToFloat16(v))) == Float.floatToRawIntBits(v);
    }
}
