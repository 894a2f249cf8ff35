package dev.modelfs.dialect;

import dev.modelfs.arch.QkPermutation;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileAssembly;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.OutputType;
import dev.modelfs.convert.UnitConverted;
import dev.modelfs.convert.UnitSource;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import java.util.ArrayList;
import java.util.List;

/**
 * The bytes of a translated GGUF (docs/FORMATS.md §12.1) over its blob: a new header (the preamble, each KV
 * copied from the blob as a slice or, when new or changed, encoded), the tensor infos at ggml's sequential
 * offsets, then each tensor's data: a {@link Segment.BlobSlice} of the blob when unchanged (no copy), a
 * {@link Segment.Converted} when its {@link TensorOp} computes it.
 *
 * <p>Invariant: the file's size and header are known from the blob's header alone; no tensor data is read.
 */
public final class TranslatedGguf {
    private TranslatedGguf() {}

    /** The translated file of {@code t} over {@code blob}. */
    public static ByteSource assemble(Translation t, BlobRef blob) {
        GgufFile g = t.header();
        List<Segment> head = new ArrayList<>();
        head.add(new Segment.Literal(GgufWriter.preamble(g.version(), g.tensors().size(), g.kvs().size())));
        for (GgufKv kv : g.kvs()) {
            head.add(kv(kv, blob));
        }
        List<FileAssembly.GgufTensor> tensors = new ArrayList<>(g.tensors().size());
        for (GgufTensorInfo info : g.tensors()) {
            tensors.add(new FileAssembly.GgufTensor(info.name(), info.ne(), info.type(), data(g, info, t.ops().get(info.name()), blob)));
        }
        return FileAssembly.gguf(head, tensors, g.alignment());
    }

    /** One KV: the blob's bytes when it came from the blob, else encoded from its value. */
    public static Segment kv(GgufKv kv, BlobRef blob) {
        return kv.rawLength() < 0 ? new Segment.Literal(GgufWriter.encodeKv(kv.key(), kv.type(), kv.value()))
                : new Segment.BlobSlice(blob, kv.rawOffset(), kv.rawLength());
    }

    private static List<Segment> data(GgufFile g, GgufTensorInfo info, TensorOp op, BlobRef blob) {
        long at = Math.addExact(g.dataStart(), info.offset());
        if (op == null) {
            return List.of(new Segment.BlobSlice(blob, at, info.byteSize()));
        }
        return switch (op) {
            case TensorOp.PromoteToF32 p -> List.of(new Segment.Converted(UnitConverted.blocks(blob, at, info.elements() / p.source().blockElements(),
                    GgmlDequantizers.forType(p.source()), OutputType.F32, info.name(), p.source().name())));
            case TensorOp.ShiftToF32 s -> List.of(new Segment.Converted(new UnitConverted(new UnitSource.Shifted(UnitSource.Blocks.converted(
                    blob, at, 1, GgmlDequantizers.forType(s.source()), OutputType.F32), s.shift(), OutputType.F32),
                    info.elements() / s.source().blockElements(), null, info.name() + " " + s.source().name() + " + " + s.shift() + " -> F32")));
            case TensorOp.TemporalSlice ts -> List.of(new Segment.Converted(temporalSlice(ts, at, info.name(), blob)));
            case TensorOp.BilinearSquare b -> List.of(new Segment.Converted(new BilinearSquareData(b, blob, at, info.name())));
            case TensorOp.Concat c -> c.offsets().stream()
                    .<Segment>map(o -> new Segment.BlobSlice(blob, Math.addExact(g.dataStart(), o), c.bytesEach())).toList();
            case TensorOp.QkRowPermute q -> {
                long rows = info.elements() / info.ne()[0];
                QkPermutation perm = new QkPermutation(q.heads(), Math.toIntExact(rows));
                OutputType type = OutputType.of(info.type());
                UnitSource source = new UnitSource.Blocks(blob, at, info.ne()[0] / info.type().blockElements(),
                        GgmlDequantizers.forType(info.type()), type, true);
                yield List.of(new Segment.Converted(new UnitConverted(source, rows, r -> perm.hfRowOf((int) r), info.name() + " q/k rows permuted")));
            }
        };
    }

    /**
     * A {@link TensorOp.TemporalSlice} of the F16 tensor at {@code blob@at}: units of {@code hw} elements, output unit
     * {@code u} the source unit {@code slice + frames * u}, widened to F32.
     *
     * @throws IllegalArgumentException when the whole source tensor does not lie inside the blob
     */
    private static UnitConverted temporalSlice(TensorOp.TemporalSlice ts, long at, String name, BlobRef blob) {
        long sourceBytes = Math.multiplyExact(Math.multiplyExact(Math.multiplyExact(ts.hw(), ts.frames()), ts.units()), 2L);
        if (Math.addExact(at, sourceBytes) > blob.expectedSize()) {
            throw new IllegalArgumentException(name + ": tensor data outside its blob");
        }
        long frames = ts.frames();
        return new UnitConverted(UnitSource.Blocks.converted(blob, at + ts.slice() * ts.hw() * 2L, ts.hw(),
                GgmlDequantizers.forType(GgmlType.F16), OutputType.F32), ts.units(), u -> frames * u,
                name + " temporal slice " + ts.slice() + " F16 -> F32");
    }
}
