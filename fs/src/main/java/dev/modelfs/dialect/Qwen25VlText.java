package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;

/**
 * Qwen 2.5-VL as Ollama's converter writes it ({@code convert/convert_qwen25vl.go}), for llama.cpp's text loader:
 * Ollama's {@code detect_ollama_qwen25vl} and {@code handle_qwen25vl} (docs/FORMATS.md §12.11). Metadata only: the
 * architecture {@code qwen25vl} becomes llama.cpp's {@code qwen2vl} (which loads Qwen2-VL and Qwen2.5-VL alike), every
 * {@code qwen25vl.*} key copied to {@code qwen2vl.*} (the old keys stay, as Ollama leaves them), the three-element
 * {@code rope.mrope_section} written as the four-element {@code rope.dimension_sections} (padded with 0) that
 * llama.cpp's M-RoPE reads, and the vision tower and merger ({@code v.*}, {@code mm.*}) left out. The text tensors
 * already carry llama.cpp's names.
 *
 * <p>A header whose {@code mrope_section} is not an integer array of at least three elements is refused: llama.cpp's
 * {@code qwen2vl} loader requires the sections, and Ollama's handler would leave them out.
 */
public record Qwen25VlText() implements DialectHandler {
    static final String ARCH = "qwen25vl";

    @Override
    public String name() {
        return "qwen25vl";
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    /** {@code detect_ollama_qwen25vl}: the architecture alone (llama.cpp names this model {@code qwen2vl}). */
    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH);
    }

    @Override
    public Translation translate(GgufFile g) {
        HeaderEdit e = new HeaderEdit(g);
        e.renameArchitecture(ARCH, "qwen2vl");
        e.set("qwen2vl.rope.dimension_sections", GgufValueType.ARRAY, dimensionSections(g.kv(ARCH + ".rope.mrope_section")));
        e.dropWithPrefix("v.", "vision tower (served in mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (served in mmproj.gguf)");
        return e.build(name(), face());
    }

    /** The first three sections of {@code mrope_section} and a 0, as INT32 (handle_qwen25vl's {@code padded}). */
    static GgufArray dimensionSections(GgufKv mrope) {
        if (mrope == null || !(mrope.value() instanceof GgufArray a) || a.values().size() < 3
                || (a.elementType() != GgufValueType.INT32 && a.elementType() != GgufValueType.UINT32)) {
            throw new FormatException("no integer " + ARCH + ".rope.mrope_section of 3 or more elements (llama.cpp's qwen2vl needs "
                    + "rope.dimension_sections)");
        }
        return new GgufArray(GgufValueType.INT32, List.of(a.values().get(0), a.values().get(1), a.values().get(2), 0));
    }
}
