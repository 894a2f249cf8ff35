package dev.modelfs.arch;

import com.fasterxml.jackson.databind.JsonNode;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * Mixtral ({@code MixtralForCausalLM}): llama attention (q/k rows permuted, FORMATS.md §7.2) with a sparse
 * mixture of experts. llama.cpp writes it as {@code general.architecture = llama} with
 * {@code llama.expert_count > 0} (so {@link #claims} tells it from {@link Llama}); the router
 * {@code block_sparse_moe.gate} is {@code ffn_gate_inp}, experts {@code block_sparse_moe.experts.E.w1/w3/w2}
 * are stacked into {@code ffn_gate_exps/ffn_up_exps/ffn_down_exps}; each expert's feed-forward size is
 * {@code intermediate_size}. Ollama's importer keeps these experts per expert (its stacking markers do not
 * include {@code block_sparse_moe}); both forms are read.
 */
public final class Mixtral implements ArchSpec {
    static final Experts EXPERTS = new Experts("block_sparse_moe.experts", "w1", "w3", "w2", "intermediate_size", null);
    private static final List<LayerRule> LAYERS = Layers.of(List.of(Layers.ATTN_NORM), Layers.ATTENTION,
            List.of(Layers.FFN_NORM), Layers.routedExperts("block_sparse_moe.gate", EXPERTS));
    private static final Tables TABLES = new Tables("llama", List.of("MixtralForCausalLM"), List.of("mixtral"), LAYERS);
    /** {@code expert_count} ({@code num_local_experts}) and {@code expert_used_count}; GraniteMoe's too. */
    static final List<ConfigKeys.Entry> ENTRIES = List.of(
            new ConfigKeys.Entry("expert_count", GgufValueType.UINT32, List.of("num_local_experts", "num_experts"), true),
            new ConfigKeys.Entry("expert_used_count", GgufValueType.UINT32, List.of("num_experts_per_tok"), true));

    @Override
    public Tables tables() {
        return TABLES;
    }

    @Override
    public java.util.Optional<Experts> experts() {
        return java.util.Optional.of(EXPERTS);
    }

    @Override
    public boolean permutesQk() {
        return true;
    }

    @Override
    public List<ConfigKeys.Entry> configEntries() {
        return ENTRIES;
    }

    @Override
    public boolean claims(GgufParams m) {
        return m.integer("llama.expert_count", 0L) > 0;
    }

    @Override
    public List<GgufKv> extraKvs(JsonNode config, String p, List<GgufKv> done, ConfigKeys.Dims d) {
        return List.of(Llama.ropeDimensions(p, d));
    }

    @Override
    public List<ComputedTensor> computedTensors(JsonNode config, List<GgufKv> kvs, ConfigKeys.Dims d) {
        return Llama.llama3RopeFreqs(config, kvs, d);
    }
}
