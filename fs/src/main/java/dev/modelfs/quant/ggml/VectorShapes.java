package dev.modelfs.quant.ggml;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The vector species of the GGML Vector API kernels: {@link #L} f32 lanes (16 on AVX-512, else 8), and byte, short
 * and int species with the same number of lanes, so that {@code L} codes load as bytes and widen lane for lane.
 *
 * <p>Invariants: {@code L} is 8 or 16 and divides 16, the smallest run of elements that shares a scale in the
 * kernels' formats, so no vector ever straddles two scales. Loaded only when the Vector API kernels are chosen
 * ({@link dev.modelfs.quant.Kernels}).
 */
final class VectorShapes {
    private VectorShapes() {}

    /** f32 lanes: 512-bit vectors where the CPU prefers at least 512 bits, else 256-bit ones. */
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED.vectorBitSize() >= 512
            ? FloatVector.SPECIES_512 : FloatVector.SPECIES_256;
    /** Lanes per vector. */
    static final int L = F.length();
    /** Same lane count, 32-bit ints. */
    static final VectorSpecies<Integer> I = IntVector.SPECIES_PREFERRED.vectorBitSize() >= 512
            ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
    /** Same lane count, bytes (64- or 128-bit vectors). */
    @SuppressWarnings("unchecked")
    static final VectorSpecies<Byte> B = (VectorSpecies<Byte>) VectorSpecies.of(byte.class, VectorShape.forBitSize(8 * L));
    /** Same lane count, 16-bit (128- or 256-bit vectors). */
    @SuppressWarnings("unchecked")
    static final VectorSpecies<Short> S = (VectorSpecies<Short>) VectorSpecies.of(short.class, VectorShape.forBitSize(16 * L));

    static {
        if (I.length() != L || B.length() != L || S.length() != L || 16 % L != 0) {
            throw new AssertionError("vector species do not line up: " + F + " " + I + " " + B + " " + S);
        }
    }
}
