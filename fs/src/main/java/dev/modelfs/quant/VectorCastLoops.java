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
 * implementation is chosen. Same bytes as the scalar loops: the roundings of {@link FloatCasts#bf16Bits} and
 * {@link Float#floatToFloat16} done on 8 or 16 lanes at once (512-bit vectors where the CPU prefers them, else
 * 256-bit); the remaining {@code count % lanes} values go through the scalar formulas.
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

    /**
     * f32 to IEEE binary16 as {@link Float#floatToFloat16}, round to nearest even: magnitudes from 2^-14 up keep
     * the top 10 mantissa bits after adding {@code 0xFFF} plus the lowest kept bit, rebiased, capped at infinity
     * (65520 and up, infinities); smaller ones are rounded to a multiple of 2^-24 by the FPU itself, adding 0.5f
     * (whose ulp is 2^-24) and keeping the low mantissa bits. Vectors holding a NaN go through
     * {@link Float#floatToFloat16} one value at a time, so NaN payloads are whatever it makes of them.
     */
    static void toF16(MemorySegment src, long srcOff, MemorySegment dst, long dstOff, long count) {
        long whole = count - count % LANES;
        for (long i = 0; i < whole; i += LANES) {
            IntVector bits = IntVector.fromMemorySegment(INTS, src, srcOff + (i << 2), LE);
            IntVector abs = bits.and(0x7FFF_FFFF);
            if (abs.compare(VectorOperators.GT, 0x7F80_0000).anyTrue()) {
                for (long k = i; k < i + LANES; k++) {
                    float f = Float.intBitsToFloat(src.get(I32, srcOff + (k << 2)));
                    dst.set(I16, dstOff + (k << 1), Float.floatToFloat16(f));
                }
                continue;
            }
            IntVector normal = abs.add(0xFFF).add(abs.lanewise(VectorOperators.LSHR, 13).and(1)).sub(0x3800_0000)
                    .lanewise(VectorOperators.LSHR, 13).min(0x7C00);
            IntVector small = abs.reinterpretAsFloats().add(0.5f).reinterpretAsInts().sub(0x3F00_0000);
            IntVector out = normal.blend(small, abs.compare(VectorOperators.LT, 0x3880_0000))
                    .or(bits.lanewise(VectorOperators.LSHR, 16).and(0x8000));
            out.convertShape(VectorOperators.I2S, SHORTS, 0).intoMemorySegment(dst, dstOff + (i << 1), LE);
        }
        for (long i = whole; i < count; i++) {
            float f = Float.intBitsToFloat(src.get(I32, srcOff + (i << 2)));
            dst.set(I16, dstOff + (i << 1), Float.floatToFloat16(f));
        }
    }
}
