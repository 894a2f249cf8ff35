package dev.modelfs.arch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Qwen 3.5's GGUF → Hugging Face mapping (docs/FORMATS.md §7.3): the V-head order checked against a transcription of
 * llama.cpp's {@code _reorder_v_heads} (a reshape to {@code [k_heads, v_per_k, dim]} and a swap of the first two axes,
 * done here on index lists), every delta-net tensor's layout, the MTP layers left out, the config fields and the refusals.
 */
class Qwen35MappingTest {
    private static final String P = "qwen35.";

    /** The converter's tiled order of {@code n = k * r * d} grouped rows: position {@code p} holds grouped row {@code [p]}. */
    private static long[] converterOrder(int k, int r, int d) {
        long[] out = new long[k * r * d];
        int p = 0;
        for (int j = 0; j < r; j++) {          // after the swap: [r, k, d]
            for (int kh = 0; kh < k; kh++) {
                for (int e = 0; e < d; e++) {
                    out[p++] = ((long) kh * r + j) * d + e;   // the element of [k, r, d] at (kh, j, e)
                }
            }
        }
        return out;
    }

    @Test
    void vHeadOrderUndoesTheConvertersTiling() {
        int k = 2, r = 3, d = 2, offset = 5, rows = offset + k * r * d + 4;
        long[] tiled = converterOrder(k, r, d);
        VHeadOrder o = new VHeadOrder(offset, k, r, d, rows);
        boolean[] seen = new boolean[rows];
        for (int hf = 0; hf < rows; hf++) {
            long g = o.applyAsLong(hf);
            assertFalse(seen[(int) g], "row " + g + " twice");
            seen[(int) g] = true;
            if (hf < offset || hf >= offset + k * r * d) {
                assertEquals(hf, g, "rows outside the V heads keep their place");
            } else {
                assertEquals(hf - offset, tiled[(int) (g - offset)], "HF row " + hf);
            }
        }
        long[] heads = converterOrder(k, r, 1);
        int[] blocks = o.blocks();
        for (int h = 0; h < blocks.length; h++) {
            assertEquals(h, heads[blocks[h]], "column block " + h);
        }
        assertTrue(o.toString().contains("k 2 v/k 3 dim 2 from 5 of " + rows), o.toString());
        assertThrows(IllegalArgumentException.class, () -> new VHeadOrder(10, 2, 3, 2, 12));
    }

    /** hidden 8; 2 key heads of 4, 4 value heads of 3, conv 4; 4 text layers (every 4th full) + 1 MTP layer. */
    static Map<String, Object> kvs() {
        Map<String, Object> m = new HashMap<>(Map.of(P + "block_count", 5L, P + "nextn_predict_layers", 1L,
                P + "ssm.group_count", 2L, P + "ssm.time_step_rank", 4L, P + "ssm.state_size", 4L, P + "ssm.inner_size", 12L,
                P + "ssm.conv_kernel", 4L, P + "full_attention_interval", 4L, P + "rope.dimension_count", 8L));
        m.put(P + "rope.dimension_sections", new int[] {2, 1, 1, 0});
        m.put(P + "rope.freq_base", 1e7);
        return m;
    }

    private static HfLayout layout(String gguf, long... ne) {
        return Architecture.QWEN35.spec().hfLayout(gguf, ne, new MapParams(kvs()), P).orElseThrow();
    }

    @Test
    void theDeltaNetsTensorsAreLaidOutAsTransformersHasThem() {
        ArchSpec s = Architecture.QWEN35.spec();
        HfLayout qkv = layout("blk.1.attn_qkv.weight", 8, 28);
        assertEquals("model.layers.1.linear_attn.in_proj_qkv.weight", qkv.hfName());
        assertArrayEquals(new long[] {28, 8}, qkv.shape());
        assertEquals(new VHeadOrder(16, 2, 2, 3, 28), qkv.rowOrder());
        assertEquals(new VHeadOrder(0, 2, 2, 3, 12), layout("blk.0.attn_gate.weight", 8, 12).rowOrder());
        assertEquals("model.layers.0.linear_attn.in_proj_a.weight", layout("blk.0.ssm_alpha.weight", 8, 4).hfName());
        assertEquals(new VHeadOrder(0, 2, 2, 1, 4), layout("blk.0.ssm_beta.weight", 8, 4).rowOrder());
        HfLayout a = layout("blk.2.ssm_a", 4);
        assertEquals("model.layers.2.linear_attn.A_log", a.hfName());
        assertEquals(ElementMap.LOG_OF_NEG, a.values());
        assertEquals(new VHeadOrder(0, 2, 2, 1, 4), a.rowOrder());
        assertEquals("model.layers.2.linear_attn.dt_bias", layout("blk.2.ssm_dt.bias", 4).hfName());
        HfLayout conv = layout("blk.0.ssm_conv1d.weight", 4, 28);
        assertArrayEquals(new long[] {28, 1, 4}, conv.shape());
        assertEquals(28, conv.rows());
        assertEquals(new VHeadOrder(16, 2, 2, 3, 28), conv.rowOrder());
        HfLayout out = layout("blk.0.ssm_out.weight", 12, 8);
        assertArrayEquals(new long[] {8, 12}, out.shape());
        assertNull(out.rowOrder());
        assertArrayEquals(new int[] {0, 2, 1, 3}, out.columnBlocks(), "HF heads (k0 v0, k0 v1, k1 v0, k1 v1) at tiled 0, 2, 1, 3");
        HfLayout norm = layout("blk.0.ssm_norm.weight", 3);
        assertEquals(ElementMap.NONE, norm.values());
        assertNull(norm.rowOrder());
        MapParams m = new MapParams(kvs());
        assertEquals(Optional.empty(), s.hfLayout("blk.3.attn_q.weight", new long[] {8, 32}, m, P));
        assertEquals(Optional.empty(), s.hfLayout("blk.0.attn_norm.weight", new long[] {8}, m, P));
        assertEquals(Optional.of("model.layers.3.self_attn.q_proj.weight"), TensorNames.toHf(Architecture.QWEN35, "blk.3.attn_q.weight"));
        assertEquals(Optional.of("model.layers.0.post_attention_layernorm.weight"),
                TensorNames.toHf(Architecture.QWEN35MOE, "blk.0.post_attention_norm.weight"));
        assertEquals(1f, Architecture.QWEN35MOE.normShift());
        assertTrue(s.hfLeavesOut("blk.4.nextn.eh_proj.weight", m, P), "the MTP layer");
        assertTrue(s.hfLeavesOut("blk.4.attn_q.weight", m, P));
        assertFalse(s.hfLeavesOut("blk.3.attn_q.weight", m, P));
        assertFalse(s.hfLeavesOut("output_norm.weight", m, P));
    }

    @Test
    void equalHeadCountsOrAFalseReorderFlagLeaveTheHeadsInPlace() {
        Map<String, Object> k = kvs();
        k.put(P + "ssm.v_head_reordered", false);
        assertNull(Architecture.QWEN35.spec().hfLayout("blk.0.attn_gate.weight", new long[] {8, 12}, new MapParams(k), P).orElseThrow().rowOrder());
        k = kvs();
        k.put(P + "ssm.group_count", 4L);
        k.put(P + "ssm.state_size", 2L);
        assertNull(Architecture.QWEN35.spec().hfLayout("blk.0.ssm_out.weight", new long[] {12, 8}, new MapParams(k), P).orElseThrow()
                .columnBlocks());
    }

    @Test
    void shapesOtherThanTheSizesSayAndOddHeadCountsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> layout("blk.0.attn_qkv.weight", 8, 27));
        assertThrows(IllegalArgumentException.class, () -> layout("blk.0.ssm_conv1d.weight", 3, 28));
        assertThrows(IllegalArgumentException.class, () -> layout("blk.0.ssm_out.weight", 8, 12));
        assertThrows(IllegalArgumentException.class, () -> layout("blk.0.ssm_a", 4, 1));
        assertThrows(IllegalArgumentException.class, () -> layout("blk.0.ssm_unknown.weight", 4));
        Map<String, Object> k = kvs();
        k.put(P + "ssm.time_step_rank", 3L);
        k.put(P + "ssm.inner_size", 9L);
        assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN35.spec().checkGguf(new MapParams(k), P));
        Map<String, Object> s = kvs();
        s.put(P + "rope.dimension_sections", new int[] {2, 1, 1, 3});
        assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN35.spec().checkGguf(new MapParams(s), P));
        Map<String, Object> n = kvs();
        n.remove(P + "full_attention_interval");
        assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN35.spec().checkGguf(new MapParams(n), P));
        Architecture.QWEN35.spec().checkGguf(new MapParams(kvs()), P);
        var no = assertThrows(IllegalArgumentException.class, () -> Architecture.QWEN35.spec().checkHfConfig(JsonNodeFactory.instance.objectNode()));
        assertTrue(no.getMessage().contains("gated delta-net sizes"), no.getMessage());   // Hugging Face → GGUF: Qwen35SynthPlanTest
    }

    @Test
    void configHasTheTextLayersTheirTypesTheLinearSizesAndPartialRope() throws Exception {
        Map<String, Object> k = kvs();
        k.put(P + "attention.recurrent_layers", new boolean[] {true, false, true, false, false});
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.put("rope_theta", 1e7);
        c.put("intermediate_size", 0);
        Architecture.QWEN35MOE.spec().completeHfConfig(c, new MapParams(k), P, 8, 2, 32);
        JsonNode want = new ObjectMapper().readTree("""
                {"num_hidden_layers": 4, "layer_types": ["linear_attention", "full_attention", "linear_attention", "full_attention"],
                 "linear_conv_kernel_dim": 4, "linear_key_head_dim": 4, "linear_value_head_dim": 3, "linear_num_key_heads": 2,
                 "linear_num_value_heads": 4, "partial_rotary_factor": 0.25,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 1.0E7, "partial_rotary_factor": 0.25,
                                     "mrope_section": [2, 1, 1], "mrope_interleaved": true},
                 "attention_bias": false}""");
        assertEquals(want, c);
        ObjectNode d = JsonNodeFactory.instance.objectNode();
        Architecture.QWEN35.spec().completeHfConfig(d, new MapParams(kvs()), P, 8, 2, 32);
        assertEquals("[\"linear_attention\",\"linear_attention\",\"linear_attention\",\"full_attention\"]", d.get("layer_types").toString());
    }

    @Test
    void layerShapesFollowTheLayerTypes() throws Exception {
        JsonNode c = new ObjectMapper().readTree("""
                {"layer_types": ["linear_attention", "full_attention"], "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                 "linear_key_head_dim": 4, "linear_value_head_dim": 3, "linear_conv_kernel_dim": 4}""");
        ConfigKeys.Dims d = new ConfigKeys.Dims(8, 2, 2, 1, 16, 10, 16, 0, 0, 0);
        ArchSpec s = Architecture.QWEN35.spec();
        assertArrayEquals(new long[] {28, 8}, s.layerShape("attn_qkv", 0, c, d).orElseThrow());
        assertArrayEquals(new long[] {28, 1, 4}, s.layerShape("ssm_conv1d", 0, c, d).orElseThrow());
        assertArrayEquals(new long[] {8, 12}, s.layerShape("ssm_out", 0, c, d).orElseThrow());
        assertEquals(Optional.empty(), s.layerShape("attn_qkv", 1, c, d));
        assertEquals(Optional.empty(), s.layerShape("attn_q", 0, c, d));
        assertArrayEquals(new long[] {64, 8}, s.layerShape("attn_q", 1, c, d).orElseThrow(), "query and gate rows");
        assertArrayEquals(new long[] {16, 8}, s.layerShape("ffn_gate", 1, c, d).orElseThrow());
    }
}
