package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import java.util.Optional;

/**
 * Llama 1/2/3.x and Mistral-style llama ({@code MistralForCausalLM}, same tensors): q/k rows permuted for
 * llama.cpp's interleaved rope (FORMATS.md §7.2), {@code rope.dimension_count}, and Llama 3.x rope scaling
 * as the {@code rope_freqs.weight} tensor ({@link RopeFreqs}) in both directions: written from
 * {@code rope_scaling}, and recovered from it (the factor is the largest value, the frequency factors and
 * the original context are Meta's: 1, 4, {@code rope.scaling.original_context_length} or 8192; the
 * recomputed tensor must equal the stored one to 1e-5 relative, the converter evaluates powers in f32).
 * A llama GGUF with experts is {@link Mixtral}.
 */
public final class Llama implements ArchSpec {
    static final float LOW = 1f, HIGH = 4f;
    static final int ORIGINAL = 8192;
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.DENSE_MLP);
    private static final Tables TABLES = new Tables("llama", List.of("LlamaForCausalLM", "MistralForCausalLM"), List.of("llama", "mistral"), LAYERS);

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public boolean claims(GgufParams m) {
        return m.integer("llama.expert_count", 0L) == 0;
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return List.of(ropeDimensions(p, d));
    }

    @Override
    public List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        return llama3RopeFreqs(config, kvs, d);
    }

    @Override
    public ObjectNode ropeScalingOf(GgufParams m, float[] freqs, int headDim) {
        return llama3ScalingOf(m, "llama.", freqs, headDim);
    }

    /**
     * The llama3 {@code rope_scaling} whose factors are the GGUF's {@code rope_freqs.weight} values {@code freqs}, the
     * rope base, rotated dimensions and original context read under prefix {@code p} ({@code "llama."}, {@code "mllama."}).
     */
    static ObjectNode llama3ScalingOf(GgufParams m, String p, float[] freqs, int headDim) {
        String why = "rope_freqs.weight (Llama 3.x rope scaling)";
        if (freqs == null || freqs.length == 0) {
            throw new IllegalArgumentException(why + ": not an F32 vector modelfs could read");
        }
        int dims = (int) (long) m.integer(p + "rope.dimension_count", (long) headDim);
        float base = (float) (double) m.real(p + "rope.freq_base", 10000.0);
        int original = (int) (long) m.integer(p + "rope.scaling.original_context_length", (long) ORIGINAL);
        float factor = 0;
        for (float f : freqs) {
            factor = Math.max(factor, f);
        }
        float[] want;
        try {
            want = RopeFreqs.llama3(new ConfigKeys.RopeScaling("llama3", factor, Optional.of(original), LOW, HIGH), base, dims);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(why + ": " + e.getMessage());
        }
        boolean same = want.length == freqs.length;
        for (int i = 0; same && i < want.length; i++) {
            same = Math.abs(want[i] - freqs[i]) <= 1e-5f * Math.abs(want[i]);
        }
        if (!same) {
            throw new IllegalArgumentException(why + " is not llama3 scaling with factor " + factor + ", frequency factors "
                    + LOW + "/" + HIGH + " and original context " + original);
        }
        ObjectNode r = JsonNodeFactory.instance.objectNode();
        r.put("rope_type", "llama3");
        r.put("factor", Double.parseDouble(Float.toString(factor)));
        r.put("low_freq_factor", (double) LOW);
        r.put("high_freq_factor", (double) HIGH);
        r.put("original_max_position_embeddings", original);
        return r;
    }

    @Override
    public void completeHfConfig(ObjectNode c, GgufParams m, String p, int hidden, int heads, int headDim) {
        c.put("mlp_bias", false);
    }

    /** {@code rope.dimension_count}: the head dimension (llama.cpp's llama converter). */
    static GgufKv ropeDimensions(String p, ConfigKeys.Dims d) {
        return new GgufKv(p + "rope.dimension_count", GgufValueType.UINT32, d.headDim(), 0, 0);
    }

    /** {@code rope_freqs.weight} when {@code config} has llama3 rope scaling (base: the written {@code rope.freq_base}). */
    static List<ComputedTensor> llama3RopeFreqs(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        var rope = ConfigKeys.ropeScaling(config);
        if (rope.isEmpty() || !rope.get().type().equals("llama3")) {
            return List.of();
        }
        float base = kvs.stream().filter(k -> k.key().equals("llama.rope.freq_base"))
                .map(k -> (Float) k.value()).findFirst().orElse(10000f);
        return List.of(new ComputedTensor("rope_freqs.weight", RopeFreqs.llama3(rope.get(), base, d.headDim())));
    }
}
