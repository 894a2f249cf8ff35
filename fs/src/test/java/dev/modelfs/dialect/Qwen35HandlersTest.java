package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.Segment;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.store.Digest;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Ollama's {@code handle_qwen35} / {@code handle_qwen35moe} (docs/FORMATS.md §12.8) on headers written the way the
 * published Qwen 3.5 / 3.6 files are: metadata fixes, {@code ssm_dt} renames, MTP tensors moved to llama.cpp's nextn
 * layer (norms shifted in F32, MoE experts stacked byte for byte), vision and projector tensors left out; llama.cpp's
 * own form untouched; contradicting headers refused.
 */
class Qwen35HandlersTest {
    private static final BlobRef BLOB = new BlobRef(Digest.parse("sha256:" + "cd".repeat(32)).orElseThrow(), 1 << 20);

    private static TinyGguf dialect(String arch) {
        return new TinyGguf().str("general.architecture", arch).u32(arch + ".block_count", 2)
                .kv(arch + ".attention.head_count_kv", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT32, List.of(0, 4)))
                .kv(arch + ".rope.dimension_sections", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(11, 11, 10)))
                .kv(arch + ".ssm.v_head_reordered", GgufValueType.BOOL, true)
                .tensor("token_embd.weight", GgmlType.F16, 8, 4)
                .tensor("blk.0.ssm_dt", GgmlType.F32, 4)
                .tensor("blk.1.attn_norm.weight", GgmlType.F32, 8)
                .tensor("v.blk.0.attn_q.weight", GgmlType.F16, 8, 8)
                .tensor("mm.0.weight", GgmlType.F16, 8, 8);
    }

    private static Translation translated(GgufFile g) {
        Outcome o = Dialects.text(g);
        return assertInstanceOf(Outcome.Translated.class, o, o::describe).translation();
    }

    private static List<String> names(Translation t) {
        return t.header().tensors().stream().map(GgufTensorInfo::name).toList();
    }

    @Test
    void metadataIsFixedDtRenamedAndVisionLeftOut() {
        Translation t = translated(dialect("qwen35").header());
        assertEquals("qwen35", t.handler());
        assertEquals(GgufValueType.UINT32, t.header().kv("qwen35.attention.head_count_kv").type());
        assertEquals(4, t.header().kv("qwen35.attention.head_count_kv").value());
        assertEquals(new GgufArray(GgufValueType.INT32, List.of(11, 11, 10, 0)), t.header().kv("qwen35.rope.dimension_sections").value());
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_dt.bias", "blk.1.attn_norm.weight"), names(t));
        assertTrue(t.slicesOnly());
        assertEquals(2, t.changes().stream().filter(c -> c.kind() == TensorChange.Kind.DROPPED).count());
        assertNull(t.header().kv("qwen35.nextn_predict_layers"));
    }

    @Test
    void allZeroKvHeadsFallBackToTwo() {
        Translation t = translated(new TinyGguf().str("general.architecture", "qwen35moe").u32("qwen35moe.feed_forward_length", 0)
                .kv("qwen35moe.attention.head_count_kv", GgufValueType.ARRAY, new GgufArray(GgufValueType.UINT32, List.of(0, 0)))
                .tensor("blk.0.ssm_dt", GgmlType.F32, 4).header());
        assertEquals("qwen35moe", t.handler());
        assertEquals(2, t.header().kv("qwen35moe.attention.head_count_kv").value());
    }

    @Test
    void llamaCppsOwnFormIsUntouched() {
        for (String arch : List.of("qwen35", "qwen35moe")) {
            GgufFile ref = new TinyGguf().str("general.architecture", arch).u32(arch + ".block_count", 1)
                    .u32(arch + ".attention.head_count_kv", 2)
                    .kv(arch + ".rope.dimension_sections", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, List.of(11, 11, 10, 0)))
                    .tensor("blk.0.ssm_dt.bias", GgmlType.F32, 4).tensor("blk.1.nextn.eh_proj.weight", GgmlType.F16, 8, 4).header();
            assertInstanceOf(Outcome.Untouched.class, Dialects.text(ref), arch);
        }
    }

    @Test
    void mtpTensorsBecomeTheNextnLayerWithShiftedNorms() {
        byte[] blob = dialect("qwen35").tensor("mtp.layers.0.attn_norm.weight", GgmlType.F32, 8)
                .tensor("mtp.layers.0.attn_q.weight", GgmlType.F16, 8, 8)
                .tensor("mtp.fc.weight", GgmlType.F16, 16, 8)
                .tensor("mtp.pre_fc_norm_embedding.weight", GgmlType.F16, 8)
                .tensor("mtp.pre_fc_norm_hidden.weight", GgmlType.F32, 8)
                .tensor("mtp.shared_head.norm.weight", GgmlType.F32, 8)
                .tensor("mtp.norm.weight", GgmlType.F32, 8).bytes();
        GgufFile g = GgufReader.read(MemorySegment.ofArray(blob));
        Translation t = translated(g);
        assertEquals(1, t.header().kv("qwen35.nextn_predict_layers").value());
        assertEquals(3, t.header().kv("qwen35.block_count").value());
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_dt.bias", "blk.1.attn_norm.weight", "blk.2.attn_norm.weight",
                "blk.2.attn_q.weight", "blk.2.nextn.eh_proj.weight", "blk.2.nextn.enorm.weight", "blk.2.nextn.hnorm.weight",
                "blk.2.nextn.shared_head_norm.weight"), names(t));
        assertEquals(Map.of("blk.2.nextn.enorm.weight", new TensorOp.ShiftToF32(GgmlType.F16, 1f),
                "blk.2.nextn.hnorm.weight", new TensorOp.ShiftToF32(GgmlType.F32, 1f),
                "blk.2.nextn.shared_head_norm.weight", new TensorOp.ShiftToF32(GgmlType.F32, 1f)), t.ops());
        assertEquals(GgmlType.F32, t.header().tensor("blk.2.nextn.enorm.weight").type());
        assertEquals(GgmlType.F16, t.header().tensor("blk.2.attn_q.weight").type(), "not a norm: renamed, same bytes");
        assertTrue(t.changes().contains(new TensorChange(TensorChange.Kind.RENAMED, "mtp.layers.0.attn_norm.weight",
                "blk.2.attn_norm.weight", "same bytes")), "the layer's norms are already 1 + w in Ollama's files: " + t.changes());

        // the views read the text model alone: the MTP head left out, every tensor a slice
        Translation views = assertInstanceOf(Outcome.Translated.class, Dialects.textForViews(g)).translation();
        assertTrue(views.slicesOnly());
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_dt.bias", "blk.1.attn_norm.weight"), names(views));
        assertEquals(2, views.header().kv("qwen35.block_count").value());
        assertNull(views.header().kv("qwen35.nextn_predict_layers"));
        assertTrue(t.changes().contains(new TensorChange(TensorChange.Kind.DROPPED, "mtp.norm.weight", "",
                "MTP tensor llama.cpp has no place for")), "mtp.norm.weight loses to mtp.shared_head.norm.weight: " + t.changes());

        // the shifted values: stored w, served 1 + w in F32 (an F16 source widened first)
        ByteSource file = TranslatedGguf.assemble(t, BLOB);
        GgufTensorInfo src = g.tensor("mtp.pre_fc_norm_embedding.weight");
        float[] got = computed(file, blob, "blk.2.nextn.enorm.weight");
        for (int i = 0; i < 8; i++) {
            int at = (int) (g.dataStart() + src.offset()) + 2 * i;
            short h = (short) ((blob[at] & 0xff) | (blob[at + 1] & 0xff) << 8);
            assertEquals(Float.float16ToFloat(h) + 1f, got[i], "element " + i);
        }
        GgufTensorInfo hid = g.tensor("mtp.pre_fc_norm_hidden.weight");
        float[] hidden = computed(file, blob, "blk.2.nextn.hnorm.weight");
        ByteBuffer b = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 8; i++) {
            assertEquals(b.getFloat((int) (g.dataStart() + hid.offset()) + 4 * i) + 1f, hidden[i], "element " + i);
        }
    }

    @Test
    void moeMtpExpertsAreStackedByteForByte() {
        TinyGguf d = dialect("qwen35moe");
        for (String k : List.of("gate_proj", "up_proj", "down_proj")) {
            for (int e = 2; e >= 0; e--) {   // out of order in the file: stacked by expert index
                d.tensor("mtp.layers.0.mlp.experts." + e + "." + k + ".weight", GgmlType.F16, 8, 4);
            }
        }
        byte[] blob = d.tensor("mtp.layers.0.mlp.gate.weight", GgmlType.F32, 8, 3).bytes();
        GgufFile g = GgufReader.read(MemorySegment.ofArray(blob));
        Translation t = translated(g);
        assertEquals(List.of("token_embd.weight", "blk.0.ssm_dt.bias", "blk.1.attn_norm.weight", "blk.2.ffn_gate_exps.weight",
                "blk.2.ffn_up_exps.weight", "blk.2.ffn_down_exps.weight", "blk.2.mlp.gate.weight"), names(t));
        GgufTensorInfo gate = t.header().tensor("blk.2.ffn_gate_exps.weight");
        assertEquals("[8, 4, 3]", Arrays.toString(gate.ne()));
        assertEquals(GgmlType.F16, gate.type());
        ByteSource file = TranslatedGguf.assemble(t, BLOB);
        List<Segment> slices = new ArrayList<>();
        for (int i = 0; i < file.segmentCount(); i++) {
            if (file.segment(i) instanceof Segment.BlobSlice s && s.length() == 64
                    && s.offset() != g.dataStart() + g.tensor("token_embd.weight").offset()) {   // also 64 bytes
                slices.add(s);
            }
        }
        List<Long> want = new ArrayList<>();
        for (String k : List.of("gate_proj", "up_proj", "down_proj")) {
            for (int e = 0; e < 3; e++) {
                want.add(g.dataStart() + g.tensor("mtp.layers.0.mlp.experts." + e + "." + k + ".weight").offset());
            }
        }
        assertEquals(want, slices.stream().map(s -> ((Segment.BlobSlice) s).offset()).toList(), "expert slices in expert order");
        assertEquals(6, t.changes().stream().filter(c -> c.detail().startsWith("stacked into")).count());
    }

    @Test
    void expertsThatDoNotStackAreRefusedWhole() {
        TinyGguf gap = dialect("qwen35moe");
        for (String k : List.of("gate_proj", "up_proj", "down_proj")) {
            gap.tensor("mtp.layers.0.mlp.experts.0." + k + ".weight", GgmlType.F16, 8, 4)
                    .tensor("mtp.layers.0.mlp.experts.2." + k + ".weight", GgmlType.F16, 8, 4);
        }
        assertRefused(gap.header(), "non-contiguous qwen35moe MTP experts");
        TinyGguf mixed = dialect("qwen35moe");
        for (String k : List.of("gate_proj", "up_proj", "down_proj")) {
            mixed.tensor("mtp.layers.0.mlp.experts.0." + k + ".weight", GgmlType.F16, 8, 4)
                    .tensor("mtp.layers.0.mlp.experts.1." + k + ".weight", GgmlType.F32, 8, 4);
        }
        assertRefused(mixed.header(), "inconsistent expert tensor shape/type");
        TinyGguf partial = dialect("qwen35moe").tensor("mtp.layers.0.mlp.experts.0.gate_proj.weight", GgmlType.F16, 8, 4);
        assertRefused(partial.header(), "incomplete qwen35moe MTP expert merge");
        GgufFile strArray = new TinyGguf().str("general.architecture", "qwen35").kv("qwen35.ssm.v_head_reordered", GgufValueType.BOOL, true)
                .kv("qwen35.attention.head_count_kv", GgufValueType.ARRAY, new GgufArray(GgufValueType.STRING, List.of("a"))).header();
        assertRefused(strArray, "qwen35.attention.head_count_kv is an array of STRING");
        GgufFile noBlocks = new TinyGguf().str("general.architecture", "qwen35").tensor("mtp.fc.weight", GgmlType.F16, 8, 4).header();
        assertRefused(noBlocks, "cannot infer the qwen3.5 text block count");
    }

    private static void assertRefused(GgufFile g, String reason) {
        Outcome o = Dialects.text(g);
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, o, o::describe);
        assertTrue(r.reason().contains(reason), r.reason() + " should say " + reason);
    }

    /** The computed F32 values of the tensor {@code name} of an assembled file (one chunk). */
    private static float[] computed(ByteSource file, byte[] blob, String name) {
        for (int i = 0; i < file.segmentCount(); i++) {
            if (file.segment(i) instanceof Segment.Converted c && c.data().describe().startsWith(name + " ")) {
                MemorySegment dst = MemorySegment.ofArray(new float[(int) (c.length() / 4)]);
                c.data().compute(0, List.of(MemorySegment.ofArray(blob)), dst);
                return dst.toArray(ValueLayout.JAVA_FLOAT);
            }
        }
        throw new AssertionError("no computed tensor " + name);
    }
}
