package dev.modelfs.quant;

import jdk.incubator.vector.FloatVector;

/** Reads the preferred vector width; loaded only when {@code jdk.incubator.vector} is in the boot layer. */
final class VectorProbe {
    private VectorProbe() {}

    static int preferredBits() {
        return FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }
}
