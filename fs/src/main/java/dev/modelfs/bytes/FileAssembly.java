package dev.modelfs.bytes;

import dev.modelfs.format.Shapes;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The two file formats the tree synthesizes, assembled from segments in one place each: a safetensors
 * file (docs/FORMATS.md §8.3) and a GGUF file (§6.1).
 *
 * <p>Invariants: the assembled size is known from headers alone; a tensor's data segment must be exactly
 * as long as its type and shape say (checked, {@link IllegalStateException} otherwise).
 */
public final class FileAssembly {
    private FileAssembly() {}

    /**
     * A safetensors file laid out by the reference writer's rules (§8.3): the synthesized header, then
     * each tensor's bytes in data order, taken from {@code data} by tensor name.
     */
    public static ByteSource safetensors(List<SafetensorsWriter.Spec> specs, Map<String, String> metadata, Map<String, Segment> data) {
        return safetensors(specs, metadata, data, null);
    }

    /**
     * The same, its header sharing the first segment of {@code sameHeader} (another file of the same model,
     * or null) when that segment holds exactly the same bytes: a header is held once, not once per file.
     */
    public static ByteSource safetensors(List<SafetensorsWriter.Spec> specs, Map<String, String> metadata, Map<String, Segment> data,
                                         ByteSource sameHeader) {
        Map<String, List<Segment>> parts = new java.util.HashMap<>();
        data.forEach((k, v) -> parts.put(k, List.of(v)));
        return safetensorsOfParts(specs, metadata, parts, sameHeader);
    }

    /** The same, a tensor's bytes being one segment or several in a row (a tensor fused from several sources). */
    public static ByteSource safetensorsOfParts(List<SafetensorsWriter.Spec> specs, Map<String, String> metadata,
                                                Map<String, List<Segment>> data, ByteSource sameHeader) {
        SafetensorsWriter.Layout layout = SafetensorsWriter.layout(specs, metadata);
        List<Segment> segs = new ArrayList<>(layout.tensors().size() + 1);
        byte[] header = layout.header();
        if (sameHeader != null && sameHeader.segmentCount() > 0 && sameHeader.segment(0) instanceof Segment.Literal l
                && Arrays.equals(l.bytes(), header)) {
            segs.add(l);
        } else {
            segs.add(new Segment.Literal(header));
        }
        for (SafetensorsWriter.Placed p : layout.tensors()) {
            List<Segment> d = data.get(p.spec().name());
            long n = 0;
            for (Segment s : d) {
                n = Math.addExact(n, s.length());
            }
            if (n != p.end() - p.begin()) {
                throw new IllegalStateException(p.spec().name() + ": " + n + " bytes for " + (p.end() - p.begin()));
            }
            segs.addAll(d);
        }
        return new ByteSource(segs);
    }

    /**
     * One tensor of a GGUF file: its info ({@code ne[0]} fastest) and its bytes in {@code type}, one segment
     * or several in a row (the experts of a tensor stacked from per-expert sources).
     */
    public record GgufTensor(String name, long[] ne, GgmlType type, List<Segment> data) {
        /** A tensor whose bytes are one segment. */
        public GgufTensor(String name, long[] ne, GgmlType type, Segment data) {
            this(name, ne, type, List.of(data));
        }

        /** Bytes of all its segments. */
        public long length() {
            long n = 0;
            for (Segment s : data) {
                n = Math.addExact(n, s.length());
            }
            return n;
        }
    }

    /**
     * A GGUF file: {@code head} (the preamble and the KVs, as the caller encodes or copies them), the
     * tensor infos with ggml's sequential offsets, padding to {@code alignment}, then each tensor's data at
     * its offset, the file padded to {@code alignment} at the end. A file without tensors ends after its
     * (empty) tensor infos.
     *
     * @throws dev.modelfs.format.FormatException when a row is not whole blocks of its type or a size overflows
     */
    public static ByteSource gguf(List<Segment> head, List<GgufTensor> tensors, long alignment) {
        List<Long> sizes = new ArrayList<>(tensors.size());
        for (GgufTensor t : tensors) {
            sizes.add(Math.multiplyExact(t.type().rowBytes(t.ne().length == 0 ? 1 : t.ne()[0]), Shapes.product(t.ne(), 1)));
        }
        long[] offsets = GgufWriter.tensorOffsets(sizes, alignment);
        ByteArrayOutputStream infos = new ByteArrayOutputStream();
        for (int i = 0; i < tensors.size(); i++) {
            GgufTensor t = tensors.get(i);
            infos.writeBytes(GgufWriter.encodeTensorInfo(t.name(), t.ne(), t.type(), offsets[i]));
        }
        List<Segment> segs = new ArrayList<>(head);
        segs.add(new Segment.Literal(infos.toByteArray()));
        if (tensors.isEmpty()) {
            return new ByteSource(segs);
        }
        long headerEnd = 0;
        for (Segment s : segs) {
            headerEnd = Math.addExact(headerEnd, s.length());
        }
        segs.add(new Segment.Zeros(GgufWriter.align(headerEnd, alignment) - headerEnd));
        long pos = 0;
        for (int i = 0; i < tensors.size(); i++) {
            GgufTensor t = tensors.get(i);
            if (t.length() != sizes.get(i)) {
                throw new IllegalStateException(t.name() + ": " + t.length() + " bytes for " + sizes.get(i) + " of " + t.type());
            }
            segs.add(new Segment.Zeros(offsets[i] - pos));
            segs.addAll(t.data());
            pos = offsets[i] + sizes.get(i);
        }
        segs.add(new Segment.Zeros(GgufWriter.align(pos, alignment) - pos));
        return new ByteSource(segs);
    }
}
