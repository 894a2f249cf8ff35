package dev.modelfs.convert;

import static dev.modelfs.format.LittleEndian.F32;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.quant.BlockDequantizer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A tensor assembled from several stacked GGML tensors of one blob, converted to {@code out}: the
 * Hugging Face tensors that llama.cpp's converter split, transposed or de-interleaved (docs/FORMATS.md
 * §7.3: gpt-oss's {@code gate_up_proj}, DeepSeek's {@code kv_b_proj}). Every source is a stack of
 * {@code batches} matrices of {@code rows × cols} (GGUF {@code ne = [cols, rows, batches]}); the output is
 * a stack of {@code batches} matrices whose rows are the rows of each {@link Part} in turn. A part's
 * sources have their rows interleaved (row {@code r} of the part is row {@code r / k} of source
 * {@code r % k}, {@code k} sources); a transposed part gives the transpose of that (its row {@code c} is
 * column {@code c} of the interleaved matrix). A unit is one output row.
 *
 * <p>Invariants: every part's output rows have {@link #cols()} elements; the sources of a part share
 * their geometry and all share {@code batches}; a unit reads only the GGML blocks holding its values,
 * which lie inside the blob (checked by {@link #requireUnits}); values are dequantized to f32 and narrowed
 * once to {@code out}; {@code order} must be null (the rows are already in Hugging Face order). A call
 * allocates its f32 rows and block scratch (native, freed on return): about a chunk.
 */
public record Gathered(BlobRef blob, long batches, List<Part> parts, OutputType out) implements UnitSource {

    /** One stacked source tensor: its data at {@code offset} in the blob, {@code rows × cols} per batch. */
    public record Source(long offset, BlockDequantizer deq, long rows, long cols) {
        long elements() {
            return rows * cols;
        }
    }

    /** Sources whose rows are interleaved, the result transposed or not. */
    public record Part(List<Source> sources, boolean transposed) {
        public Part {
            List<Source> all = List.copyOf(sources);
            sources = all;
            if (all.isEmpty() || all.stream().anyMatch(s -> s.rows() != all.getFirst().rows()
                    || s.cols() != all.getFirst().cols() || s.rows() <= 0 || s.cols() <= 0)) {
                throw new IllegalArgumentException("a gathered part needs sources of one positive geometry");
            }
        }

        long outRows() {
            Source s = sources.getFirst();
            return transposed ? s.cols() : s.rows() * sources.size();
        }

        long outCols() {
            Source s = sources.getFirst();
            return transposed ? s.rows() * sources.size() : s.cols();
        }
    }

    public Gathered {
        List<Part> all = List.copyOf(parts);
        parts = all;
        if (all.isEmpty() || batches <= 0 || all.stream().anyMatch(p -> p.outCols() != all.getFirst().outCols())) {
            throw new IllegalArgumentException("gathered parts must give rows of one length");
        }
    }

    /** Elements of an output row. */
    public long cols() {
        return parts.getFirst().outCols();
    }

    /** Output rows of one batch. */
    public long rowsPerBatch() {
        return parts.stream().mapToLong(Part::outRows).sum();
    }

    /** Output units (rows) in all. */
    public long units() {
        return batches * rowsPerBatch();
    }

    @Override
    public long outUnitBytes() {
        return cols() * out.bytes;
    }

    @Override
    public List<BlobRef> blobs() {
        return List.of(blob);
    }

    @Override
    public void requireUnits(long units, String what) {
        if (units != units()) {
            throw new IllegalArgumentException(what + ": " + units + " units, the parts give " + units());
        }
        for (Part p : parts) {
            for (Source s : p.sources()) {
                long elements = Math.multiplyExact(batches, s.elements());
                int be = s.deq().blockElements();
                if (elements % be != 0 || s.offset() < 0
                        || Math.addExact(s.offset(), elements / be * s.deq().blockBytes()) > blob.expectedSize()) {
                    throw new IllegalArgumentException(what + ": tensor data outside its blob or not whole blocks");
                }
            }
        }
    }

    @Override
    public void write(List<MemorySegment> blobs, long first, long count, LongUnaryOperator order, MemorySegment dst) {
        if (order != null) {
            throw new IllegalArgumentException("gathered rows are not reordered");
        }
        MemorySegment src = blobs.getFirst();
        long elements = count * cols();
        try (Arena arena = Arena.ofConfined()) {
            // all rows at once (a transposed part reads each source block once per run of rows), then narrowed once
            boolean direct = out == OutputType.F32 && dst.isNative();
            MemorySegment f32 = direct ? dst : arena.allocate(elements * 4, 64);
            gather(src, first, count, f32, 0, new Scratch(arena));
            if (!direct) {
                out.format.fromF32(f32, 0, dst, 0, elements);
            }
        }
    }

    /** Output rows {@code [u0, u0+n)} as f32 at {@code f32@off}. */
    private void gather(MemorySegment src, long u0, long n, MemorySegment f32, long off, Scratch scratch) {
        long perBatch = rowsPerBatch();
        long cols = cols();
        for (long u = u0; u < u0 + n; ) {
            long b = u / perBatch;
            long r = u % perBatch;
            long start = 0;
            Part part = null;
            for (Part p : parts) {
                if (r < start + p.outRows()) {
                    part = p;
                    break;
                }
                start += p.outRows();
            }
            long run = Math.min(u0 + n - u, start + part.outRows() - r);
            long at = off + (u - u0) * cols * 4;
            if (part.transposed()) {
                transposed(src, part, b, r - start, run, f32, at, scratch);
            } else {
                for (long i = 0; i < run; i++) {
                    long pr = r - start + i;
                    Source s = part.sources().get((int) (pr % part.sources().size()));
                    long flat = b * s.elements() + pr / part.sources().size() * s.cols();
                    long from = scratch.load(src, s, flat, flat + s.cols());
                    MemorySegment.copy(scratch.f32, from * 4, f32, at + i * cols * 4, s.cols() * 4);
                }
            }
            u += run;
        }
    }

    /** Rows {@code [c0, c0+run)} of transposed part {@code p} in batch {@code b}: columns of its interleaved sources. */
    private static void transposed(MemorySegment src, Part p, long b, long c0, long run, MemorySegment f32, long at, Scratch scratch) {
        int k = p.sources().size();
        long outCols = p.outCols();
        for (int j = 0; j < k; j++) {
            Source s = p.sources().get(j);
            for (long r = 0; r < s.rows(); r++) {
                long flat = b * s.elements() + r * s.cols() + c0;
                long from = scratch.load(src, s, flat, flat + run);
                long col = r * k + j;
                for (long c = 0; c < run; c++) {
                    f32.set(F32, at + (c * outCols + col) * 4, scratch.f32.get(F32, (from + c) * 4));
                }
            }
        }
    }

    /** Native f32 scratch for the blocks of one range (kernels see native segments only). */
    private static final class Scratch {
        private final Arena arena;
        MemorySegment f32;

        Scratch(Arena arena) {
            this.arena = arena;
        }

        /** Dequantizes the blocks of {@code s} holding flat elements {@code [from, to)}; returns the index of {@code from} in {@link #f32}. */
        long load(MemorySegment src, Source s, long from, long to) {
            BlockDequantizer deq = s.deq();
            long be = deq.blockElements();
            long lo = from / be;
            long hi = (to + be - 1) / be;
            long bytes = (hi - lo) * be * 4;
            if (f32 == null || f32.byteSize() < bytes) {
                f32 = arena.allocate(Math.max(bytes, 4096), 64);
            }
            GuardedPages.touch(src, s.offset() + lo * deq.blockBytes(), s.offset() + hi * deq.blockBytes());
            deq.dequantize(src, s.offset() + lo * deq.blockBytes(), f32, 0, hi - lo);
            return from - lo * be;
        }
    }
}
