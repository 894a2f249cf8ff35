package dev.modelfs.dialect;

import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufValueType;

/**
 * The text side of Nemotron 3 Omni ({@code nemotron_h_omni}: Nemotron-H text, a RADIO vision tower, a Parakeet audio
 * encoder and their projectors in one file, as Ollama's {@code convert_nemotron_h.go} writes it,
 * {@code nemotronHNanoVLModel}): Ollama's {@code detect_ollama_nemotron_h_omni} / {@code handle_nemotron_h_omni}
 * (docs/FORMATS.md §12.17).
 *
 * <p>Markers: architecture {@code nemotron_h_omni} and a tensor {@code v.*}, {@code a.*} or {@code mm.*}. Edits: the
 * architecture becomes {@code nemotron_h_moe} when {@code nemotron_h_omni.expert_count} or
 * {@code expert_used_count} is positive, else {@code nemotron_h}; every {@code nemotron_h_omni.*} key but the
 * {@code vision.*} and {@code audio.*} ones copied under that name (the source keys stay, as Ollama leaves them);
 * {@code a.*}, {@code v.*}, {@code mm.*} left out; then, for {@code nemotron_h_moe}, {@link NemotronHMoe}'s fixes.
 */
public record NemotronHOmni() implements DialectHandler {
    static final String ARCH = "nemotron_h_omni";
    private static final String PREFIX = ARCH + ".";

    @Override
    public String name() {
        return ARCH;
    }

    @Override
    public Face face() {
        return Face.TEXT;
    }

    @Override
    public boolean matches(GgufFile g) {
        return Markers.architecture(g, ARCH)
                && (Markers.anyTensorWithPrefix(g, "v.") || Markers.anyTensorWithPrefix(g, "a.") || Markers.anyTensorWithPrefix(g, "mm."));
    }

    /** {@code nemotron_h_omni_text_arch}: {@code nemotron_h_moe} when the file has experts, else {@code nemotron_h}. */
    static String textArch(GgufFile g) {
        return Markers.u32(g, PREFIX + "expert_count") > 0 || Markers.u32(g, PREFIX + "expert_used_count") > 0
                ? NemotronHMoe.ARCH : "nemotron_h";
    }

    @Override
    public Translation translate(GgufFile g) {
        String arch = textArch(g);
        HeaderEdit e = new HeaderEdit(g);
        e.set("general.architecture", GgufValueType.STRING, arch);
        for (GgufKv kv : g.kvs()) {   // copy_nemotron_h_omni_text_kvs
            String k = kv.key();
            if (k.startsWith(PREFIX) && !k.startsWith(PREFIX + "vision.") && !k.startsWith(PREFIX + "audio.")) {
                e.copy(k, arch + "." + k.substring(PREFIX.length()));
            }
        }
        e.dropWithPrefix("a.", "audio encoder (hidden from the text loader)");
        e.dropWithPrefix("v.", "vision tower (mmproj.gguf)");
        e.dropWithPrefix("mm.", "projector (mmproj.gguf; the audio projector is left out)");
        if (arch.equals(NemotronHMoe.ARCH)) {
            NemotronHMoe.fix(g, e);
        }
        return e.build(name(), face());
    }
}
