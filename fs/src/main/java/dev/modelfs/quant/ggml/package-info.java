/**
 * GGML dequantization kernels ({@link dev.modelfs.quant.ggml.GgmlDequantizers#forType}), bit-exact
 * with ggml's {@code dequantize_row_*} (docs/FORMATS.md §6.2/§6.4).
 *
 * <p><b>Exactness.</b> All arithmetic is f32 in ggml's order (Java never contracts {@code a*b + c} into an
 * FMA). Where a kernel looks a small integer up in a table ({@code Le.S8_F32}, {@code Le.Q6_K_F32}, ...)
 * the table holds exactly {@code (float) code}, so the product is the same as ggml's {@code code * d}.
 * MXFP4/NVFP4 follow ggml, not OCP: the FP4 table is doubled and the scales halved; E8M0 255 decodes
 * to 2^127 (so codes with |value| >= 2 overflow to ±inf, ±1 gives ±2^127); UE4M3 ignores bit 7 except
 * that only the bytes 0x00 and 0x7F decode to 0 (0xFF decodes to 240).
 *
 * <p><b>Performance notes.</b> HotSpot does not auto-vectorize these loops over native segments, so
 * the kernels are scalar and shaped for C2: each block is read through {@code src.asSlice(off, blockBytes)}
 * (and usually written through {@code dst.asSlice(off, blockBytes out)}); with constant offsets inside a
 * slice of constant size the per-access bounds checks fold away, and escape analysis scalar-replaces the
 * slices, so compiled code allocates nothing (the interpreter/C1 do allocate them while warming up;
 * check the compiled state with JMH's {@code -prof gc} on {@code GgmlDequantBench}). A slice must never be passed to a helper that
 * might not be inlined (the IQ lattice kernels therefore write to {@code dst} directly). Q2_K, Q3_K, Q5_K
 * and Q6_K build eight codes per 64-bit word (SWAR); Q4_0/Q8_0/Q4_K are fastest with byte loads.
 *
 * <p><b>Vector API kernels.</b> F16, BF16, Q4_0, Q4_1, Q8_0, Q4_K, Q5_K and Q6_K also have Vector API kernels
 * ({@code GgmlVectorLoops}), used when {@link dev.modelfs.quant.Kernels#active()} is {@code VECTOR}; they write the
 * same bytes as the scalar ones (same f32 operations in the same order, no FMA). They are reached only through
 * {@code GgmlVectorKernels}, so a JVM running the scalar kernels never loads them, and they run in copies per pair of
 * segment classes ({@link dev.modelfs.quant.SegmentKernelCopies}) because a profile that has seen heap, native and
 * mapped segments made them up to 17x slower.
 *
 * <p>May import: {@code format} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.quant.ggml;
