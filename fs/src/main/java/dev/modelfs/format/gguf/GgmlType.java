package dev.modelfs.format.gguf;

import dev.modelfs.format.FormatException;

/**
 * A ggml tensor element type as stored in a GGUF tensor info (docs/FORMATS.md §6.2, current ggml ids).
 *
 * <p>Invariants: {@link #id()} is the on-disk id (unique); a block of {@link #blockElements()}
 * consecutive elements of one row is stored in {@link #blockBytes()} bytes; plain types have
 * one-element blocks. Removed ids (4, 5, 31–33, 36–38) and ids {@code >= 43} have no constant.
 */
public enum GgmlType {
    F32(0, 1, 4), F16(1, 1, 2), Q4_0(2, 32, 18), Q4_1(3, 32, 20), Q5_0(6, 32, 22), Q5_1(7, 32, 24),
    Q8_0(8, 32, 34), Q8_1(9, 32, 36), Q2_K(10, 256, 84), Q3_K(11, 256, 110), Q4_K(12, 256, 144),
    Q5_K(13, 256, 176), Q6_K(14, 256, 210), Q8_K(15, 256, 292), IQ2_XXS(16, 256, 66), IQ2_XS(17, 256, 74),
    IQ3_XXS(18, 256, 98), IQ1_S(19, 256, 50), IQ4_NL(20, 32, 18), IQ3_S(21, 256, 110), IQ2_S(22, 256, 82),
    IQ4_XS(23, 256, 136), I8(24, 1, 1), I16(25, 1, 2), I32(26, 1, 4), I64(27, 1, 8), F64(28, 1, 8),
    IQ1_M(29, 256, 56), BF16(30, 1, 2), TQ1_0(34, 256, 54), TQ2_0(35, 256, 66), MXFP4(39, 32, 17),
    NVFP4(40, 64, 36), Q1_0(41, 128, 18), Q2_0(42, 64, 18);

    private static final GgmlType[] BY_ID = new GgmlType[43];

    static {
        for (GgmlType t : values()) {
            if (BY_ID[t.id] != null) {
                throw new ExceptionInInitializerError("duplicate ggml type id " + t.id);
            }
            BY_ID[t.id] = t;
        }
    }

    private final int id;
    private final int blockElements;
    private final int blockBytes;

    GgmlType(int id, int blockElements, int blockBytes) {
        this.id = id;
        this.blockElements = blockElements;
        this.blockBytes = blockBytes;
    }

    /** The on-disk {@code ggml_type} id. */
    public int id() {
        return id;
    }

    /** Elements per block (1 for plain types). */
    public int blockElements() {
        return blockElements;
    }

    /** Bytes per block. */
    public int blockBytes() {
        return blockBytes;
    }

    /** True for block-quantized types ({@code blockElements() > 1}). */
    public boolean isQuantized() {
        return blockElements > 1;
    }

    /** True for the plain integer types I8, I16, I32, I64. */
    public boolean isInteger() {
        return this == I8 || this == I16 || this == I32 || this == I64;
    }

    /**
     * The type with this on-disk id.
     *
     * @throws FormatException for unknown, removed or negative ids
     */
    public static GgmlType byId(int id) {
        GgmlType t = id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
        if (t == null) {
            throw new FormatException("unknown or removed ggml type id " + Integer.toUnsignedString(id));
        }
        return t;
    }

    /**
     * Bytes of one row of {@code ne0} elements: {@code ne0 / blockElements() * blockBytes()}.
     *
     * @throws FormatException if {@code ne0} is negative, not a multiple of {@link #blockElements()},
     *                         or the size overflows a long
     */
    public long rowBytes(long ne0) {
        if (ne0 < 0) {
            throw new FormatException("negative row length " + ne0 + " for ggml type " + this);
        }
        if (ne0 % blockElements != 0) {
            throw new FormatException("row length " + ne0 + " is not a multiple of the " + this + " block size "
                    + blockElements);
        }
        try {
            return Math.multiplyExact(ne0 / blockElements, (long) blockBytes);
        } catch (ArithmeticException e) {
            throw new FormatException("row of " + ne0 + " " + this + " elements overflows");
        }
    }
}
