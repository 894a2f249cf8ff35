package dev.modelfs.view;

/**
 * A family of synthesized files added to a model directory (converted safetensors, GGUF variants ...).
 * Implementations read only blob headers while building and must leave the tree unchanged for
 * models they do not apply to.
 */
public interface ModelView {
    void addTo(ModelContext ctx, TreeBuilder tree);
}
