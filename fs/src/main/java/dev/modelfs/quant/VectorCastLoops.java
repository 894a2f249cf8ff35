package dev.modelfs.quant;

import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Vector API versions of the bulk loops of {@link FloatCasts} ({@link Kernels.Impl#VECTOR}); copied per
 * segment-class pair by {@link SegmentKernelCopies} like the scalar ones. Loaded only when the vector
 * implementation is chosen. Same bytes as the scalar loops: the bf16 rounding is {@link FloatCasts#bf16Bits}
 * done on 8 or 16 lanes at once (512-bit vectors where the CPU prefers them, else 256-bit), the remaining
 * {@code count % lanes} values go through the scalar formula.
 *
 * <p>f32 to f16 has no vector version here: the scalar loop is C2's intrinsic {@code vcvtps2ph} per value and
 * reproducing {@link Float#floatToFloat16} (subnormals, NaN payloads) in integer lanes was not faster.
 */
final class VectorCastLoops {

    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED.vectorBitSize() >= 512
            ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
    private static final VectorSpecies<Short> SHORTS = INTS.length() == 16 ? ShortVector.SPECIES_256 : ShortVector.SPECIES_128;
    private static final int LANES = INTS.length();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private VectorCastLoops() {}

    static void toBf16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        long whole = count - count % LANES;
        for (long i = 0; i < whole; i += LANES) {
            IntVector bits = IntVector.fromMemorySegment(INTS, src, srcOff + (i << 2), LE);
            IntVector high = bits.lanewise(VectorOperators.LSHR, 16);
            // round to nearest even: add 0x7FFF plus the lowest kept bit, keep the high half
            IntVector rounded = bits.add(high.and(1)).add(0x7FFF).lanewise(VectorOperators.LSHR, 16);
            VectorMask<Integer> nan = bits.and(0x7FFF_FFFF).compare(VectorOperators.GT, 0x7F80_0000);
            IntVector out = rounded.blend(high.or(0x0040), nan);
            out.convertShape(VectorOperators.I2S, SHORTS, 0).intoMemorySegment(dst, dstOff + (i << 1), LE);
        }
        for (long i = whole; i < count; i++) {
            dst.set(I16, dstOff + (i << 1), (short) FloatCasts.bf16Bits(src.get(I32, srcOff + (i << 2))));
        }
    }
}
