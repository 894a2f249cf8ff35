package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A store of safetensors models written by the test (the stalled- and failing-store tests): each model one tensor
 * blob of {@value #TENSORS} F16 tensors of seeded random values, which are the oracle of its {@code fp32/} file
 * (widened by the JDK's {@link Float#float16ToFloat}).
 */
final class F16Store {
    static final int TENSORS = 4;
    static final int COLS = 512;

    /** F16 bits of each model's tensors, by model name and tensor name. */
    private final Map<String, Map<String, short[]>> written = new HashMap<>();

    /** The tensors written for model {@code name}. */
    Map<String, short[]> get(String name) {
        return written.get(name);
    }

    /** Writes models {@code names} into {@code store}, tensors of {@code rows} x {@value #COLS}; returns the store. */
    Path write(Path store, List<String> names, int rows) throws IOException {
        for (String name : names) {
            Map<String, short[]> tensors = new LinkedHashMap<>();
            Random r = new Random(name.hashCode());
            for (int t = 0; t < TENSORS; t++) {
                short[] v = new short[rows * COLS];
                for (int i = 0; i < v.length; i++) {
                    v[i] = Float.floatToFloat16((float) r.nextGaussian());
                }
                tensors.put("model.layers." + t + ".mlp.up_proj.weight", v);
            }
            written.put(name, tensors);
            SmallStore.addTensorModel(store, name, List.of(safetensors(tensors, rows)), List.of("model.layers"));
        }
        return store;
    }

    private static byte[] safetensors(Map<String, short[]> tensors, int rows) {
        StringBuilder h = new StringBuilder("{");
        long off = 0;
        for (var e : tensors.entrySet()) {
            long end = off + 2L * e.getValue().length;
            h.append(h.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":{\"dtype\":\"F16\",\"shape\":[")
                    .append(rows).append(',').append(COLS).append("],\"data_offsets\":[").append(off).append(',').append(end).append("]}");
            off = end;
        }
        h.append('}');
        while (h.length() % 8 != 0) {
            h.append(' ');
        }
        byte[] header = h.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + (int) off).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header);
        tensors.values().forEach(v -> {
            for (short s : v) {
                b.putShort(s);
            }
        });
        return b.array();
    }

    /** Every tensor of the safetensors file {@code f} is F32 and holds the F16 values written, widened. */
    static void checkFp32(Path f, Map<String, short[]> tensors) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(f)).order(ByteOrder.LITTLE_ENDIAN);
        int n = (int) b.getLong();
        JsonNode h = new ObjectMapper().readTree(new String(b.array(), 8, n, StandardCharsets.UTF_8));
        for (var e : tensors.entrySet()) {
            JsonNode t = h.get(e.getKey());
            assertEquals("F32", t.get("dtype").asText(), f + ": " + e.getKey());
            int start = 8 + n + t.get("data_offsets").get(0).asInt();
            short[] v = e.getValue();
            assertEquals(4L * v.length, t.get("data_offsets").get(1).asLong() - t.get("data_offsets").get(0).asLong());
            for (int i = 0; i < v.length; i++) {
                float want = Float.float16ToFloat(v[i]);
                float have = b.getFloat(start + 4 * i);
                if (Float.floatToRawIntBits(want) != Float.floatToRawIntBits(have)) {
                    throw new AssertionError(f + ": " + e.getKey() + "[" + i + "] is " + have + ", not " + want);
                }
            }
        }
    }

}
