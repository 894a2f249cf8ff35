package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Qwen 3.5 / 3.6 dense ({@code qwen35}) as Ollama published it: Ollama's {@code detect_ollama_qwen35} /
 * {@code handle_qwen35} (docs/FORMATS.md §12.8), the fixes it shares with {@link Qwen35Moe}
 * ({@code apply_qwen35_text_fixes}): the per-layer {@code attention.head_count_kv} array collapsed to its maximum
 * (2 when all are 0), a 3-element {@code rope.dimension_sections} padded with a 0, {@code *.ssm_dt} renamed to
 * {@code *.ssm_dt.bias}, embedded MTP tensors ({@code mtp.*}) translated to llama.cpp's layer after the text blocks
 * (the shared norms computed as {@code 1 + w} in F32, the MoE's per-expert tensors stacked), and the vision tower,
 * projector and any untranslated MTP tensor ({@code v.*}, {@code mm.*}, {@code mtp.*}) left out.
 *
 * <p>Where modelfs differs from Ollama's layer: the MTP layer's own norms ({@code mtp.layers.N.*_norm.weight}) are
 * renamed, not shifted again. Ollama's converter (commit da70c3222, the only one that wrote {@code mtp.*} names) already
 * stores them as {@code 1 + w} ({@code qwen3NextModel.addOne} matches every {@code _norm.weight}), so Ollama's
 * {@code register_qwen35_norm_shift_load} would make them {@code 2 + w}; llama.cpp's converter has {@code 1 + w}
 * (checked by the dialect fixture). The shared {@code mtp.pre_fc_norm_*} and {@code mtp.norm} are stored as {@code w}.
 *
 * <p>Invariants: a header whose MTP experts do not stack (gaps, mixed types or shapes) is refused as a whole, never
 * half-translated; {@link #forViews} is the same translation without the MTP head, every tensor a slice of the blob.
 */
public record Qwen35() implements DialectHandler {
    private static final Pattern BLK = Pattern.compile("blk\\.(\\d+)\\..*");
    private static final Pattern MTP_LAYER = Pattern.compile("mtp\\.layers\\.(\\d+)\\.(.+)");
    private static final Pattern MTP_EXPERT = Pattern.compile("mtp\\.layers\\.(\\d+)\\.mlp\\.experts\\.(\\d+)\\.(.+)");
    /** The shared MTP tensors of a single MTP layer and their llama.cpp names ({@code rename_qwen35_mtp_tensors}). */
    private static final String[][] SHARED = {{"mtp.fc.weight", "nextn.eh_proj.weight"},
        {"mtp.pre_fc_norm_embedding.weight", "nextn.enorm.weight"}, {"mtp.pre_fc_norm_hidden.weight", "nextn.hnorm.weight"},
        {"mtp.embed_tokens.weight", "nextn.embed_tokens.weight"}, {"mtp.shared_head.head.weight", "nextn.shared_head_head.weight"},
        {"mtp.shared_head.norm.weight", "nextn.shared_head_norm.weight"}, {"mtp.norm.weight", "nextn.shared_head_norm.weight"}};

    @Override
    public String name() {
        return "qwen35";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_qwen35}: the published files' vision, rope and SSM keys, or embedded MTP or vision tensors. */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, "qwen35") && (Markers.has(g, "qwen35.vision.block_count") || Markers.has(g, "qwen35.image_token_id")
                || Markers.has(g, "qwen35.ssm.v_head_reordered") || Markers.has(g, "qwen35.rope.mrope_interleaved")
                || Markers.anyTensorWithPrefix(g, "mtp.") || Markers.anyTensorWithPrefix(g, "v."));
    }

    @Override
    public Translation translate(GgufFile g) {
        return textFixes(g, "qwen35", name(), true);
    }

    @Override
    public Translation forViews(GgufFile g) {
        return textFixes(g, "qwen35", name(), false);
    }

    /**
     * {@code apply_qwen35_text_fixes} for the architecture {@code arch} ({@code qwen35} or {@code qwen35moe});
     * {@code withMtp} false: the MTP tensors left out rather than translated (the text model alone).
     */
    static Translation textFixes(GgufFile g, String arch, String handler, boolean withMtp) {
        HeaderEdit e = new HeaderEdit(g);
        collapseToMax(g, e, arch + ".attention.head_count_kv", 2);
        GgufKv sections = g.kv(arch + ".rope.dimension_sections");
        if (sections != null && sections.value() instanceof GgufArray a && a.size() == 3) {
            if (a.elementType() != GgufValueType.INT32 && a.elementType() != GgufValueType.UINT32) {
                throw new FormatException(sections.key() + " is an array of " + a.elementType());
            }
            List<Object> padded = new ArrayList<>(a.values());
            padded.add(0);
            e.set(sections.key(), GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, padded));
        }
        e.renameSuffix(".ssm_dt", ".ssm_dt.bias");
        if (withMtp) {
            mtp(g, e, arch);
        }
        e.dropWithPrefix("v.", "vision tower (not part of the text model)");
        e.dropWithPrefix("mm.", "projector (not part of the text model)");
        e.dropWithPrefix("mtp.", withMtp ? "MTP tensor llama.cpp has no place for" : "MTP head (in model.gguf only)");
        return e.build(handler, Face.TEXT);
    }

    /** {@code collapse_u32_array_to_max}: an array KV becomes the UINT32 of its largest entry ({@code fallback} when all are 0). */
    private static void collapseToMax(GgufFile g, HeaderEdit e, String key, int fallback) {
        GgufKv kv = g.kv(key);
        if (kv == null || !(kv.value() instanceof GgufArray a)) {
            return;
        }
        if (a.elementType() != GgufValueType.UINT32 && a.elementType() != GgufValueType.INT32) {
            throw new FormatException(key + " is an array of " + a.elementType());
        }
        long max = 0;
        for (Object v : a.values()) {
            max = Math.max(max, Integer.toUnsignedLong((Integer) v));
        }
        e.remove(key);
        e.set(key, GgufValueType.UINT32, (int) (max == 0 ? fallback : max));
    }

    /** {@code apply_qwen35_mtp_fixes}: nothing when there are no {@code mtp.*} tensors or already llama.cpp's nextn ones. */
    private static void mtp(GgufFile g, HeaderEdit e, String arch) {
        int nextn = 0;
        boolean any = false;
        boolean nativeNextn = false;
        long maxBlock = -1;
        for (GgufTensorInfo t : g.tensors()) {
            String n = t.name();
            if (n.startsWith("mtp.")) {
                any = true;
                Matcher m = MTP_LAYER.matcher(n);
                if (m.matches()) {
                    nextn = Math.max(nextn, index(m.group(1), n) + 1);
                }
            }
            if (n.startsWith("blk.") && n.contains(".nextn.")) {
                nativeNextn = true;
            }
            Matcher b = BLK.matcher(n);
            if (b.matches()) {
                maxBlock = Math.max(maxBlock, index(b.group(1), n));
            }
        }
        if (any && nextn == 0) {
            nextn = 1;
        }
        if (nextn == 0 || nativeNextn) {
            return;
        }
        long base = maxBlock >= 0 ? maxBlock + 1 : Markers.u32(g, arch + ".block_count");
        if (base <= 0) {
            throw new FormatException("cannot infer the qwen3.5 text block count for the MTP translation");
        }
        if (base + nextn > 0xFFFF_FFFFL) {
            throw new FormatException(arch + ".block_count " + base + " leaves no room for " + nextn + " MTP layers");
        }
        e.set(arch + ".nextn_predict_layers", GgufValueType.UINT32, nextn);
        e.set(arch + ".block_count", GgufValueType.UINT32, (int) (base + nextn));
        if (arch.equals("qwen35moe")) {
            for (int i = 0; i < nextn; i++) {
                stackExperts(g, e, i, base + i);
            }
        }
        for (GgufTensorInfo t : g.tensors()) {
            Matcher m = MTP_LAYER.matcher(t.name());
            if (m.matches() && index(m.group(1), t.name()) < nextn
                    && !(arch.equals("qwen35moe") && m.group(2).startsWith("mlp.experts."))) {
                renameMtp(e, t.name(), "blk." + (base + index(m.group(1), t.name())) + "." + m.group(2), false);
            }
        }
        if (nextn == 1) {
            for (String[] s : SHARED) {
                renameMtp(e, s[0], "blk." + base + "." + s[1], true);
            }
        }
    }

    /** {@code merge_qwen35moe_mtp_expert_tensors} for one MTP layer: gate, up and down stacked, all three or none. */
    private static void stackExperts(GgufFile g, HeaderEdit e, int mtp, long block) {
        String[][] kinds = {{"gate_proj.weight", "ffn_gate_exps.weight"}, {"up_proj.weight", "ffn_up_exps.weight"},
            {"down_proj.weight", "ffn_down_exps.weight"}};
        int stacked = 0;
        for (String[] k : kinds) {
            TreeMap<Integer, String> experts = new TreeMap<>();
            for (GgufTensorInfo t : g.tensors()) {
                Matcher m = MTP_EXPERT.matcher(t.name());
                if (m.matches() && index(m.group(1), t.name()) == mtp && m.group(3).equals(k[0])) {
                    experts.put(index(m.group(2), t.name()), t.name());
                }
            }
            if (experts.isEmpty()) {
                continue;
            }
            if (experts.lastKey() != experts.size() - 1) {
                throw new FormatException("non-contiguous qwen35moe MTP experts for layer " + mtp + " suffix " + k[0]);
            }
            e.concat(new ArrayList<>(experts.values()), "blk." + block + "." + k[1]);
            stacked++;
        }
        if (stacked != 0 && stacked != kinds.length) {
            throw new FormatException("incomplete qwen35moe MTP expert merge for layer " + mtp);
        }
    }

    /**
     * {@code rename_qwen35_mtp_tensor}: skipped when the source is gone or the target taken; with {@code shiftNorms}
     * (the shared tensors, stored as {@code w}) a norm target becomes {@code 1 + w} in F32.
     */
    private static void renameMtp(HeaderEdit e, String from, String to, boolean shiftNorms) {
        if (e.tensor(from) == null || e.tensor(to) != null) {
            return;
        }
        e.rename(from, to);
        if (shiftNorms && !to.endsWith(".ssm_norm.weight") && (to.endsWith("_norm.weight") || to.endsWith(".nextn.enorm.weight")
                || to.endsWith(".nextn.hnorm.weight"))) {
            e.shiftToF32(to, 1.0f);
        }
    }

    private static int index(String digits, String name) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException ex) {
            throw new FormatException("tensor " + name + " has a layer index out of range");
        }
    }
}
