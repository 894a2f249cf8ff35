package dev.modelfs.view;

import java.util.List;

/** The synthesized-file families every mount shows, in the order they are added to a model directory. */
public final class StandardViews {
    private StandardViews() {}

    public static List<ModelView> all() {
        return List.of(new GgufModelView(), new SafetensorsModelView(), new SynthesizedGgufView());
    }
}
