package dev.modelfs.bytes;

import dev.modelfs.telemetry.FileKind;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The bytes of one file: an ordered list of segments laid end to end.
 *
 * <p>Invariants: immutable; {@link #size()} is the sum of segment lengths and is known without
 * reading any blob data; {@link #blobs()} lists every blob any segment reads, each once.
 */
public final class ByteSource {
    private final Segment[] segments;
    private final long[] starts;
    private final long size;
    private final List<BlobRef> blobs;
    /** For a BlobSlice segment, the index of its blob in {@link #blobs()}; -1 otherwise. */
    private final int[] blobIndex;
    private final FileKind kind;

    public ByteSource(List<? extends Segment> parts) {
        List<Segment> kept = new ArrayList<>();
        for (Segment s : parts) {
            if (s.length() > 0) {
                kept.add(s);
            }
        }
        this.segments = kept.toArray(Segment[]::new);
        this.starts = new long[segments.length];
        long pos = 0;
        Set<BlobRef> refs = new LinkedHashSet<>();
        for (int i = 0; i < segments.length; i++) {
            starts[i] = pos;
            pos = Math.addExact(pos, segments[i].length());
            switch (segments[i]) {
                case Segment.BlobSlice b -> refs.add(b.blob());
                case Segment.Converted c -> refs.addAll(c.data().blobs());
                case Segment.Literal l -> { }
                case Segment.Zeros z -> { }
            }
        }
        this.size = pos;
        this.blobs = List.copyOf(refs);
        this.blobIndex = new int[segments.length];
        for (int i = 0; i < segments.length; i++) {
            blobIndex[i] = segments[i] instanceof Segment.BlobSlice b ? blobs.indexOf(b.blob()) : -1;
        }
        this.kind = kindOf(segments);
    }

    /** The kind of a file made of {@code segments} (the rule of {@link FileKind}). */
    private static FileKind kindOf(Segment[] segments) {
        boolean slices = false;
        for (Segment s : segments) {
            if (s instanceof Segment.Converted) {
                return FileKind.CONVERTED;
            }
            slices |= s instanceof Segment.BlobSlice;
        }
        if (segments.length == 1 && segments[0] instanceof Segment.BlobSlice b
                && b.offset() == 0 && b.length() == b.blob().expectedSize()) {
            return FileKind.PASSTHROUGH;
        }
        return slices ? FileKind.REASSEMBLED : FileKind.SYNTHESIZED;
    }

    /** What the file's bytes are, for the bytes-served figures. */
    public FileKind kind() {
        return kind;
    }

    public static ByteSource of(Segment... parts) {
        return new ByteSource(List.of(parts));
    }

    public static ByteSource literal(byte[] bytes) {
        return new ByteSource(List.of(new Segment.Literal(bytes)));
    }

    public long size() {
        return size;
    }

    public List<BlobRef> blobs() {
        return blobs;
    }

    public int segmentCount() {
        return segments.length;
    }

    public Segment segment(int i) {
        return segments[i];
    }

    public long start(int i) {
        return starts[i];
    }

    /** Index in {@link #blobs()} of the blob segment {@code i} slices (segment {@code i} must be a BlobSlice). */
    public int blobIndex(int i) {
        return blobIndex[i];
    }

    /** Index of the segment containing byte {@code offset} ({@code 0 <= offset < size}). */
    public int segmentAt(long offset) {
        int lo = 0, hi = segments.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= offset) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
