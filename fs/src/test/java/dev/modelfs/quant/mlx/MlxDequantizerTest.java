package dev.modelfs.quant.mlx;

import dev.modelfs.quant.Kernels;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static dev.modelfs.format.LittleEndian.F32;
import static org.junit.jupiter.api.Assertions.*;

/** Argument checking and a few hand-computed values, for each {@link Kernels.Impl}. */
class MlxDequantizerTest {

    private static final MlxQuant INT4 = MlxQuant.affine(4, 64);

    private static MlxTensorData int4Data(MemorySegment codes, MemorySegment scales, MemorySegment biases) {
        return new MlxTensorData(codes, 0, scales, 0, ScaleType.BF16, biases, 0, 1f);
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void runsTheImplementationAskedFor(Kernels.Impl impl) {
        assertEquals(impl, MlxDequantizer.of(INT4, impl).impl());
        assertEquals(Kernels.active(), MlxDequantizer.of(INT4).impl());
        assertThrows(NullPointerException.class, () -> MlxDequantizer.of(INT4, null));
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void rejectsMismatchedScaleTypesAndMissingBias(Kernels.Impl impl) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment codes = arena.allocate(64), sc = arena.allocate(8), dst = arena.allocate(1024);
            MlxDequantizer int4 = MlxDequantizer.of(INT4, impl);
            assertThrows(IllegalArgumentException.class,
                    () -> int4.dequantize(new MlxTensorData(codes, 0, sc, 0, ScaleType.U8, sc, 0, 1f), 0, 1, dst, 0));
            assertThrows(IllegalArgumentException.class,
                    () -> int4.dequantize(new MlxTensorData(codes, 0, sc, 0, ScaleType.BF16, null, 0, 1f), 0, 1, dst, 0));
            assertThrows(IllegalArgumentException.class,
                    () -> int4.dequantize(new MlxTensorData(codes, 0, sc, 0, ScaleType.BF16, sc, 0, 2f), 0, 1, dst, 0));
            MlxDequantizer nv = MlxDequantizer.of(MlxQuant.of("nvfp4", null), impl);
            assertThrows(IllegalArgumentException.class,
                    () -> nv.dequantize(new MlxTensorData(codes, 0, sc, 0, ScaleType.BF16, null, 0, 1f), 0, 1, dst, 0));
            assertThrows(IllegalArgumentException.class, () -> int4.dequantize(int4Data(codes, sc, sc), -1, 1, dst, 0));
            assertThrows(IllegalArgumentException.class, () -> int4.dequantize(int4Data(codes, sc, sc), 0, -1, dst, 0));
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void rejectsOutOfRangeBeforeWriting(Kernels.Impl impl) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment codes = arena.allocate(64), sc = arena.allocate(4), dst = arena.allocate(512);
            dst.fill((byte) 7);
            MlxDequantizer int4 = MlxDequantizer.of(INT4, impl);
            // two groups of codes, scales and dst room, but three groups asked
            assertThrows(IndexOutOfBoundsException.class, () -> int4.dequantize(int4Data(codes, sc, sc), 0, 3, dst, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> int4.dequantize(int4Data(codes, sc, sc), 1, 2, dst, 0));
            // dst one byte short
            assertThrows(IndexOutOfBoundsException.class, () -> int4.dequantize(int4Data(codes, sc, sc), 0, 2, dst, 1));
            for (long i = 0; i < dst.byteSize(); i++) assertEquals(7, dst.get(ValueLayout.JAVA_BYTE, i));
            // zero groups: nothing happens even at the end of the segment
            int4.dequantize(int4Data(codes, sc, sc), 2, 0, dst, 512);
            assertThrows(IllegalArgumentException.class, () -> int4.dequantize(int4Data(codes, sc, sc), 0, 1, dst.asReadOnly(), 0));
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void readOnlyCodeSegmentsAreFine(Kernels.Impl impl) {
        byte[] codes = new byte[32];
        for (int i = 0; i < 32; i++) codes[i] = (byte) 0x21; // elements alternate 1, 2
        byte[] scaleBias = {0x00, 0x3F, 0x00, 0x40}; // LE BF16: 0x3F00 = 0.5 (scale), 0x4000 = 2 (bias)
        MemorySegment ro = MemorySegment.ofArray(codes).asReadOnly();
        MemorySegment sb = MemorySegment.ofArray(scaleBias).asReadOnly();
        MemorySegment dst = MemorySegment.ofArray(new float[64]);
        MlxDequantizer.of(INT4, impl).dequantize(new MlxTensorData(ro, 0, sb, 0, ScaleType.BF16, sb, 2, 1f), 0, 1, dst, 0);
        for (int i = 0; i < 64; i++) {
            assertEquals(i % 2 == 0 ? 2.5f : 3f, dst.get(F32, 4L * i), "element " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(Kernels.Impl.class)
    void f16AndF32ScalesAndHandPickedFpValues(Kernels.Impl impl) {
        try (Arena arena = Arena.ofConfined()) {
            // int8 g32, F32 scale -0.25, F16 would be 2 bytes; codes 0..31
            MemorySegment codes = arena.allocate(32);
            for (int i = 0; i < 32; i++) codes.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            MemorySegment sc = arena.allocate(8);
            sc.set(F32, 0, -0.25f);
            sc.set(F32, 4, 1f);
            MemorySegment dst = arena.allocate(128);
            MlxDequantizer.of(MlxQuant.affine(8, 32), impl)
                    .dequantize(new MlxTensorData(codes, 0, sc, 0, ScaleType.F32, sc, 4, 1f), 0, 1, dst, 0);
            for (int i = 0; i < 32; i++) assertEquals(1f - 0.25f * i, dst.get(F32, 4L * i));

            // mxfp8: code 0x38 (1.0) and 0x7F (480, MLX), scale 0x80 (2.0), scale 0xFF (+inf)
            MemorySegment c8 = arena.allocate(64);
            c8.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x38);
            c8.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x7F);
            c8.set(ValueLayout.JAVA_BYTE, 2, (byte) 0xFF);
            c8.set(ValueLayout.JAVA_BYTE, 32, (byte) 0x38);
            MemorySegment s8 = arena.allocate(2);
            s8.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x80);
            s8.set(ValueLayout.JAVA_BYTE, 1, (byte) 0xFF);
            MemorySegment d8 = arena.allocate(256);
            MlxDequantizer.of(MlxQuant.of("mxfp8", null), impl)
                    .dequantize(new MlxTensorData(c8, 0, s8, 0, ScaleType.U8, null, 0, 1f), 0, 2, d8, 0);
            assertEquals(2f, d8.get(F32, 0));
            assertEquals(960f, d8.get(F32, 4));
            assertEquals(-960f, d8.get(F32, 8));
            assertEquals(Float.POSITIVE_INFINITY, d8.get(F32, 128));
            assertTrue(Float.isNaN(d8.get(F32, 132)), "0 * inf"); // code 0 times the +inf scale

            // nvfp4 with global scale: (E2M1 * E4M3) * G
            MemorySegment c4 = arena.allocate(8);
            c4.set(ValueLayout.JAVA_BYTE, 0, (byte) 0xF7); // elements 6, -6
            MemorySegment s4 = arena.allocate(1);
            s4.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x39); // 1.125
            MemorySegment d4 = arena.allocate(64);
            MlxDequantizer.of(MlxQuant.of("nvfp4", null), impl)
                    .dequantize(new MlxTensorData(c4, 0, s4, 0, ScaleType.U8, null, 0, 0.1f), 0, 1, d4, 0);
            assertEquals(6f * 1.125f * 0.1f, d4.get(F32, 0));
            assertEquals(-(6.75f * 0.1f), d4.get(F32, 4));
        }
    }
}
