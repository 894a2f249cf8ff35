package dev.modelfs.cli;

import dev.modelfs.view.ModelView;
import java.util.List;

/** The synthesized-file families every mount shows. */
final class Views {
    private Views() {}

    static List<ModelView> all() {
        return List.of(new dev.modelfs.view.GgufModelView(), new dev.modelfs.view.SafetensorsModelView());
    }
}
