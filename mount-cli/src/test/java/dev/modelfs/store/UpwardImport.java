package dev.modelfs.store;

import dev.modelfs.tree.StoreTree;

/** A deliberately bad class for {@code LayeringTest}: {@code store} importing {@code tree}, an upward import. */
public final class UpwardImport {
    private UpwardImport() {}

    public static int rootInode(StoreTree tree) {
        return (int) tree.root().inode();
    }
}
