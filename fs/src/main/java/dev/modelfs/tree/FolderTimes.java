package dev.modelfs.tree;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The mtimes of the store-level folders (the root and the host/namespace folders above model
 * directories), kept across rescans so that a client caching a folder's listing sees it change.
 *
 * <p>Invariants, per folder path: a folder seen for the first time gets the newest mtime among its
 * entries (so the same store gives the same times in every process); while its listing (each entry's
 * name and inode) stays the same its mtime only rises to stay at least its newest entry's; when the
 * listing changes (an entry added, removed or replaced) the mtime becomes
 * {@code max(previous + 1 ns, newest entry's mtime)}, so it moves forward even when the newest
 * manifest was the one removed. It never goes backwards while the process runs. Only the folders of
 * the latest build are remembered (memory is bounded by the current tree). Not thread-safe: the
 * owner ({@link StoreTree}) calls it under its lock.
 */
final class FolderTimes {
    private record Seen(SortedMap<String, Long> listing, long mtimeNanos) {}

    private Map<String, Seen> seen = Map.of();
    private Map<String, Seen> next = new HashMap<>();

    /** The mtime of the folder at {@code path} whose entries are {@code children}; records it for the next build. */
    long mtimeOf(String path, SortedMap<String, Node> children) {
        SortedMap<String, Long> listing = new TreeMap<>();
        long newest = 0;
        for (var e : children.entrySet()) {
            listing.put(e.getKey(), e.getValue().inode());
            newest = Math.max(newest, e.getValue().mtimeNanos());
        }
        Seen before = seen.get(path);
        long mtime;
        if (before == null) {
            mtime = newest;
        } else if (before.listing().equals(listing)) {
            mtime = Math.max(before.mtimeNanos(), newest);
        } else {
            mtime = Math.max(before.mtimeNanos() + 1, newest);
        }
        next.put(path, new Seen(listing, mtime));
        return mtime;
    }

    /** Ends a build: the folders recorded since the last call become the ones compared against next time. */
    void commit() {
        seen = next;
        next = new HashMap<>();
    }
}
