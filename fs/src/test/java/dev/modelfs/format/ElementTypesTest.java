package dev.modelfs.format;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.safetensors.Dtype;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@link ElementTypes}: the plain encodings shared by safetensors and GGUF (FORMATS.md §6.2, §8.4), both ways. */
class ElementTypesTest {
    /** Pairs with the same element encoding, from the two spec tables (widths: §6.2 block bytes, §8.4 bits). */
    private static final Map<Dtype, GgmlType> SHARED = Map.of(
            Dtype.F32, GgmlType.F32, Dtype.F16, GgmlType.F16, Dtype.BF16, GgmlType.BF16, Dtype.F64, GgmlType.F64,
            Dtype.I8, GgmlType.I8, Dtype.I16, GgmlType.I16, Dtype.I32, GgmlType.I32, Dtype.I64, GgmlType.I64);

    @Test
    void everyDtypeMapsToItsGgmlTwinOrNothing() {
        for (Dtype d : Dtype.values()) {
            assertEquals(Optional.ofNullable(SHARED.get(d)), ElementTypes.ggml(d), d.name());
        }
    }

    @Test
    void everyGgmlTypeMapsBackOrNothing() {
        for (GgmlType t : GgmlType.values()) {
            Optional<Dtype> d = ElementTypes.dtype(t);
            assertEquals(d.isPresent(), SHARED.containsValue(t), t.name());
            d.ifPresent(x -> {
                assertEquals(t, SHARED.get(x), t.name());
                assertEquals(x.bits(), 8 * t.blockBytes(), "width of " + t);
            });
        }
    }
}
