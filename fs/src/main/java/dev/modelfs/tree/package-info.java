/**
 * The tree of nodes a store shows: StoreTree (snapshots, rescans, lazy model directories), ModelDirectory, the
 * ModelView contract and TreeBuilder (docs/DESIGN.md §2.4).
 *
 * <p>May import: {@code bytes}, {@code format}, {@code model}, {@code store} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.tree;
