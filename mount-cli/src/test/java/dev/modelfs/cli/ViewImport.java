package dev.modelfs.cli;

import dev.modelfs.view.gguf.GgufModelView;

/** A deliberately bad class for {@code LayeringTest}: the CLI importing a view, which it reaches only through {@code serve}. */
final class ViewImport {
    private ViewImport() {}

    static String viewName() {
        return GgufModelView.class.getSimpleName();
    }
}
