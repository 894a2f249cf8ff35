package dev.modelfs.tree;

import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What every converted-file view does the same way: place a synthesized file, assemble a safetensors file. */
public final class ViewFiles {
    private ViewFiles() {}

    /** Places a synthesized file (inode from the model's manifest digest and the path). */
    public static void put(ModelContext ctx, TreeBuilder tree, String path, ByteSource src, String what) {
        tree.put(path, new FileNode(ctx.inodeOf(path), ctx.mtimeNanos(), src, Map.of("user.modelfs.source", what)));
    }

    /**
     * A safetensors file laid out by the reference writer's rules (§8.3): the synthesized header, then
     * each tensor's bytes in data order, taken from {@code data} by tensor name.
     */
    public static ByteSource safetensors(List<SafetensorsWriter.Spec> specs, Map<String, String> metadata, Map<String, Segment> data) {
        SafetensorsWriter.Layout layout = SafetensorsWriter.layout(specs, metadata);
        List<Segment> segs = new ArrayList<>(layout.tensors().size() + 1);
        segs.add(new Segment.Literal(layout.header()));
        for (SafetensorsWriter.Placed p : layout.tensors()) {
            segs.add(data.get(p.spec().name()));
        }
        return new ByteSource(segs);
    }
}
