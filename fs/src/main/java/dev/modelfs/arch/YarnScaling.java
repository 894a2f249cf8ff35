package dev.modelfs.arch;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The yarn {@code rope_scaling} of a rebuilt {@code config.json} beyond what {@link ConfigKeys#toHf} writes
 * (type, factor, original context): {@code beta_fast} / {@code beta_slow} from llama.cpp's
 * {@code rope.scaling.yarn_beta_fast/slow} (transformers' defaults 32 and 1 when absent). Only yarn is
 * mapped for the architectures that use it (docs/FORMATS.md §7.4).
 */
final class YarnScaling {
    private YarnScaling() {
    }

    /**
     * The {@code rope_scaling} node of {@code c} with the betas added, or null when {@code c} has none.
     *
     * @throws IllegalArgumentException when it is not yarn
     */
    static ObjectNode complete(ObjectNode c, GgufParams m, String p) {
        if (!c.path("rope_scaling").isObject()) {
            return null;
        }
        ObjectNode r = (ObjectNode) c.get("rope_scaling");
        if (!r.path("rope_type").asText().equals("yarn")) {
            throw new IllegalArgumentException(p + "rope.scaling.type " + r.path("rope_type").asText() + ": only yarn is mapped for "
                    + p.substring(0, p.length() - 1));
        }
        r.put("beta_fast", shortest(m.real(p + "rope.scaling.yarn_beta_fast", 32.0)));
        r.put("beta_slow", shortest(m.real(p + "rope.scaling.yarn_beta_slow", 1.0)));
        return r;
    }

    /** The shortest decimal that reads back as the same f32 (GGUF floats are f32). */
    static double shortest(double v) {
        return Double.parseDouble(Float.toString((float) v));
    }
}
