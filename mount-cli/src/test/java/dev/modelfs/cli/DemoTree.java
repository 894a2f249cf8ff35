package dev.modelfs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.BlobMappings;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.OpenedSource;
import dev.modelfs.serve.StandardViews;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.DirNode;
import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.Node;
import dev.modelfs.tree.StoreTree;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** The demo store under {@code root}, its tree as the standard views build it, and reads of its files; for view tests. */
final class DemoTree {
    final OllamaStore store;
    final DirNode root;

    DemoTree(Path dir) throws IOException {
        new DemoStore(dir).write();
        store = new OllamaStore(dir);
        StoreTree tree = new StoreTree(store, new ModelDirectory(StandardViews.all()));
        tree.refresh();
        root = tree.root();
    }

    /** The whole of {@code path} in model {@code model}, read through the store's blobs. */
    byte[] read(String model, String path) throws IOException {
        Node n = root.child(model);
        for (String part : path.split("/")) {
            n = ((DirNode) n).child(part);
        }
        if (!(n instanceof FileNode f)) {
            throw new AssertionError(model + "/" + path + " is not a file");
        }
        try (BlobMappings m = new BlobMappings(8); ChunkCache chunks = new ChunkCache(8 << 20);
                OpenedSource o = OpenedSource.open(f.source(), BlobResolver.forStore(store, m), chunks)) {
            byte[] out = new byte[Math.toIntExact(f.size())];
            o.read(0, MemorySegment.ofArray(out), 0, out.length);
            return out;
        }
    }

    /** A safetensors file read by the format's definition (u64 header length, JSON header, data): here with Jackson, not modelfs. */
    record Safetensors(byte[] bytes, JsonNode header, int dataStart) {
        static Safetensors of(byte[] bytes) throws IOException {
            int n = Math.toIntExact(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(0));
            return new Safetensors(bytes, new ObjectMapper().readTree(new String(bytes, 8, n, StandardCharsets.UTF_8)), 8 + n);
        }

        String dtype(String name) {
            return header.get(name).get("dtype").asText();
        }

        /** The tensor's data as a little-endian buffer. */
        ByteBuffer data(String name) {
            JsonNode o = header.get(name).get("data_offsets");
            return ByteBuffer.wrap(bytes, dataStart + o.get(0).asInt(), o.get(1).asInt() - o.get(0).asInt()).slice().order(ByteOrder.LITTLE_ENDIAN);
        }

        long[] shape(String name) {
            JsonNode s = header.get(name).get("shape");
            long[] out = new long[s.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = s.get(i).asLong();
            }
            return out;
        }
    }

    /**
     * The values of the MLX affine int4 weight {@code name} of a tensor blob (group 64): code i is nibble i
     * of the little-endian code stream, value = scale * code + bias of its group (FORMATS.md §5.2), scales
     * and biases BF16 (the top half of an f32).
     */
    static float[] int4Values(Safetensors blob, String name) {
        ByteBuffer codes = blob.data(name);
        ByteBuffer scale = blob.data(name + ".scale");
        ByteBuffer bias = blob.data(name + ".bias");
        int n = codes.capacity() * 2;
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            int code = (codes.get(i / 2) >> (4 * (i % 2))) & 0xf;
            float s = Float.intBitsToFloat((scale.getShort(2 * (i / 64)) & 0xffff) << 16);
            float b = Float.intBitsToFloat((bias.getShort(2 * (i / 64)) & 0xffff) << 16);
            v[i] = s * code + b;
        }
        return v;
    }
}
