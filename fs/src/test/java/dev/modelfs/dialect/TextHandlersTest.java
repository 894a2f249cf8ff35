package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The metadata-and-rename handlers of Ollama's {@code llama-ollama-compat.cpp} (docs/FORMATS.md §12.6): gptoss,
 * lfm2, olmo3, laguna, qwen3next and the snowflake-arctic-embed2 tokenizer, each on a header built the way its
 * marker says, and left alone on llama.cpp's own form.
 */
class TextHandlersTest {
    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(Translation t) {
        return t.header().tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void gptossBecomesGptOss() {
        GgufFile g = new TinyGguf().str("general.architecture", "gptoss").u32("gptoss.block_count", 1).str("tokenizer.ggml.pre", "default")
                .tensor("blk.0.attn_out.weight", GgmlType.F32, 8, 8).tensor("blk.0.attn_sinks", GgmlType.F32, 2)
                .tensor("blk.0.ffn_norm.weight", GgmlType.F32, 8).tensor("blk.0.ffn_gate_exps.weight", GgmlType.F32, 8, 16, 2).header();
        Translation t = translated(g);
        assertEquals("gpt-oss", t.header().kv("general.architecture").value());
        assertEquals(1, t.header().kv("gpt-oss.block_count").value());
        assertNotNull(t.header().kv("gptoss.block_count"), "Ollama's rename_kv_prefix copies");
        assertEquals(16, t.header().kv("gpt-oss.expert_feed_forward_length").value());
        assertEquals("yarn", t.header().kv("gpt-oss.rope.scaling.type").value());
        assertEquals("gpt-4o", t.header().kv("tokenizer.ggml.pre").value());
        assertEquals(List.of("blk.0.attn_output.weight", "blk.0.attn_sinks.weight", "blk.0.post_attention_norm.weight",
                "blk.0.ffn_gate_exps.weight"), names(t));
        Outcome noExperts = Dialects.text(new TinyGguf().str("general.architecture", "gptoss").header());
        assertInstanceOf(Outcome.Refused.class, noExperts);
    }

    @Test
    void lfm2RenamesItsNormAndFixesTheFeedForwardLength() {
        GgufFile g = new TinyGguf().str("general.architecture", "lfm2").u32("lfm2.feed_forward_length", 99)
                .tensor("output_norm.weight", GgmlType.F32, 8).tensor("blk.0.ffn_gate.weight", GgmlType.F32, 8, 24).header();
        Translation t = translated(g);
        assertEquals(List.of("token_embd_norm.weight", "blk.0.ffn_gate.weight"), names(t));
        assertEquals(24, t.header().kv("lfm2.feed_forward_length").value());
        assertEquals("lfm2", t.header().kv("tokenizer.ggml.pre").value());
        GgufFile upstream = new TinyGguf().str("general.architecture", "lfm2").tensor("token_embd_norm.weight", GgmlType.F32, 8).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(upstream));
    }

    @Test
    void olmo3IsReadAsOlmo2() {
        Translation t = translated(new TinyGguf().str("general.architecture", "olmo3").u32("olmo3.block_count", 2)
                .f32("olmo3.rope.freq_base", 5e5f).header());
        assertEquals("olmo2", t.header().kv("general.architecture").value());
        assertEquals(2, t.header().kv("olmo2.block_count").value());
        assertEquals(5e5f, t.header().kv("olmo2.rope.freq_base").value());
    }

    @Test
    void lagunaGetsUpstreamRopeKeysAndGateNames() {
        Translation t = translated(new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                .f32("laguna.rope.swa.freq_base", 1e4f).tensor("blk.0.attn_g.weight", GgmlType.F32, 8, 8)
                .tensor("blk.1.attn_g.weight", GgmlType.F32, 8, 8).header());
        assertEquals(32, t.header().kv("laguna.rope.dimension_count_swa").value());
        assertEquals(1e4f, t.header().kv("laguna.rope.freq_base_swa").value());
        assertEquals(List.of("blk.0.attn_gate.weight", "blk.1.attn_gate.weight"), names(t));
        GgufFile wrongType = new TinyGguf().str("general.architecture", "laguna").str("laguna.rope.swa.dimension_count", "32").header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(wrongType));
    }

    @Test
    void lagunaYarnAttentionFactorIsRestatedForLlamaCpp() {
        float def = (float) (0.1 * Math.log(4.0) + 1.0);   // lagunaAttentionFactor without attention_factor
        TinyGguf base = new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                .str("laguna.rope.scaling.type", "yarn").f32("laguna.rope.scaling.factor", 4f);
        assertNull(translated(base.f32(Laguna.ATTN_FACTOR, def).header()).header().kv(Laguna.ATTN_FACTOR), "the default mscale: no key");
        TinyGguf explicit = new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                .str("laguna.rope.scaling.type", "yarn").f32("laguna.rope.scaling.factor", 4f).f32(Laguna.ATTN_FACTOR, 2 * def);
        assertEquals(2f, (Float) translated(explicit.header()).header().kv(Laguna.ATTN_FACTOR).value(), 1e-6f);
        TinyGguf plain = new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                .str("laguna.rope.scaling.type", "linear").f32("laguna.rope.scaling.factor", 4f).f32(Laguna.ATTN_FACTOR, 1.5f);
        assertEquals(1.5f, translated(plain.header()).header().kv(Laguna.ATTN_FACTOR).value(), "not YaRN: as stored");
    }

    @Test
    void lagunaDefaultRopeTypeIsPlainRopeForLlamaCpp() {
        // Ollama's converter writes the config's rope_type as is: "default" (or "") aborts llama.cpp's loader
        for (String plain : new String[] {"default", ""}) {
            Translation t = translated(new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                    .str(Laguna.SCALING_TYPE, plain).f32(Laguna.SCALING_FACTOR, 1f).f32(Laguna.ATTN_FACTOR, 1f).header());
            assertNull(t.header().kv(Laguna.SCALING_TYPE), "llama.cpp's conversion of plain RoPE writes no scaling type");
            assertNull(t.header().kv(Laguna.SCALING_FACTOR), "nor a factor");
            assertEquals(1f, t.header().kv(Laguna.ATTN_FACTOR).value());
        }
        for (String known : new String[] {"none", "linear", "yarn", "longrope"}) {
            Translation t = translated(new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                    .str(Laguna.SCALING_TYPE, known).f32(Laguna.SCALING_FACTOR, 2f).header());
            assertEquals(known, t.header().kv(Laguna.SCALING_TYPE).value());
            assertEquals(2f, t.header().kv(Laguna.SCALING_FACTOR).value());
        }
        Outcome dynamic = Dialects.text(new TinyGguf().str("general.architecture", "laguna").u32("laguna.rope.swa.dimension_count", 32)
                .str(Laguna.SCALING_TYPE, "dynamic").header());
        assertTrue(assertInstanceOf(Outcome.Refused.class, dynamic).reason().contains("\"dynamic\""), dynamic.describe());
        assertInstanceOf(Outcome.Refused.class, Dialects.text(new TinyGguf().str("general.architecture", "laguna")
                .u32("laguna.rope.swa.dimension_count", 32).u32(Laguna.SCALING_TYPE, 1).header()));
    }

    @Test
    void qwen3NextCollapsesKvHeadsAndRenamesDt() {
        Translation t = translated(new TinyGguf().str("general.architecture", "qwen3next")
                .kv("qwen3next.attention.head_count_kv", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT32, List.of(0, 2, 0, 2)))
                .tensor("blk.0.ssm_dt", GgmlType.F32, 4).tensor("blk.0.ssm_a", GgmlType.F32, 4).header());
        assertEquals(GgufValueType.UINT32, t.header().kv("qwen3next.attention.head_count_kv").type());
        assertEquals(2, t.header().kv("qwen3next.attention.head_count_kv").value());
        assertEquals(List.of("blk.0.ssm_dt.bias", "blk.0.ssm_a"), names(t));
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(new TinyGguf().str("general.architecture", "qwen3next")
                .tensor("blk.0.ssm_dt.bias", GgmlType.F32, 4).header()));
    }

    @Test
    void snowflakeCharsmapIsDecodedToBytes() {
        byte[] charsmap = "precompiled \u0000 charsmap bytes".getBytes(StandardCharsets.ISO_8859_1);
        List<Object> digits = new ArrayList<>();
        for (char c : Base64.getEncoder().encodeToString(charsmap).toCharArray()) {
            digits.add(String.valueOf(c));
        }
        GgufFile g = new TinyGguf().str("general.architecture", "bert").str("tokenizer.ggml.model", "t5")
                .kv("tokenizer.ggml.precompiled_charsmap", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, digits)).header();
        GgufArray got = (GgufArray) translated(g).header().kv("tokenizer.ggml.precompiled_charsmap").value();
        assertEquals(GgufValueType.UINT8, got.elementType());
        byte[] back = new byte[got.size()];
        for (int i = 0; i < back.length; i++) {
            back[i] = (Byte) got.values().get(i);
        }
        assertEquals(new String(charsmap, StandardCharsets.ISO_8859_1), new String(back, StandardCharsets.ISO_8859_1));
        GgufFile twoChars = new TinyGguf().str("general.architecture", "bert").str("tokenizer.ggml.model", "t5")
                .kv("tokenizer.ggml.precompiled_charsmap", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("QU", "E="))).header();
        assertInstanceOf(Outcome.Refused.class, Dialects.text(twoChars));
        GgufFile bytes = new TinyGguf().str("general.architecture", "bert").str("tokenizer.ggml.model", "t5")
                .kv("tokenizer.ggml.precompiled_charsmap", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT8, List.of((byte) 1))).header();
        assertInstanceOf(Outcome.Untouched.class, Dialects.text(bytes));
        assertNull(Dialects.handlers().stream().filter(h -> h.face() == null).findAny().orElse(null));
        assertTrue(Dialects.handlers().size() >= 10);
    }
}
