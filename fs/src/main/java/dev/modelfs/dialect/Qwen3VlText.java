package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * Qwen3-VL ({@code qwen3vl}) and its MoE sibling ({@code qwen3vlmoe}) as Ollama's converter wrote them
 * ({@code convert/convert_qwen3vl.go} at commit 7d25b9e19), for llama.cpp's text loader: Ollama's
 * {@code detect_ollama_qwen3vl} and {@code handle_qwen3vl} (docs/FORMATS.md §12.12). Metadata only: the M-RoPE
 * sections {@code A.rope.dimension_sections} injected as Ollama's handler injects them ({@code [24, 20, 20, 0]}, the
 * published family's; the converter wrote none, since the published configs name their rope type
 * {@code rope_type}, which it did not read), {@code A.n_deepstack_layers} = the length of
 * {@code A.vision.deepstack_visual_indexes} when missing, the vision tower and merger ({@code v.*}, {@code mm.*})
 * left out. The text tensors already carry llama.cpp's names.
 */
public record Qwen3VlText() implements DialectHandler {
    /** {@code handle_qwen3vl}'s {@code mrope}: the sections of the published Qwen3-VL family (head width 128). */
    static final List<Object> SECTIONS = List.of(24, 20, 20, 0);

    @Override
    public String name() {
        return "qwen3vl";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** The architecture ({@code qwen3vl_arch}), or null. */
    static String arch(GgufFile g) {
        return Markers.architecture(g, "qwen3vl") ? "qwen3vl" : Markers.architecture(g, "qwen3vlmoe") ? "qwen3vlmoe" : null;
    }

    /** {@code detect_ollama_qwen3vl}: architecture {@code qwen3vl}/{@code qwen3vlmoe} without {@code A.rope.dimension_sections}. */
    @Override
    public boolean matches(GgufFile g) {
        String a = arch(g);
        return a != null && !Markers.has(g, a + ".rope.dimension_sections");
    }

    @Override
    public Translation translate(GgufFile g) {
        String a = arch(g);
        HeaderEdit e = new HeaderEdit(g);
        e.set(a + ".rope.dimension_sections", GgufValueType.ARRAY, new GgufArray(GgufValueType.INT32, SECTIONS));
        GgufKv ds = g.kv(a + ".vision.deepstack_visual_indexes");
        int n = ds != null && ds.value() instanceof GgufArray arr ? arr.values().size() : 0;
        e.inject(a + ".n_deepstack_layers", GgufValueType.UINT32, n);
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        return e.build(name(), face());
    }
}
