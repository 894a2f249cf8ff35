package dev.modelfs.fuse;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Open-file handles by number, looked up without boxing or allocation on the read path.
 *
 * <p>Invariants: a handle number is in use by at most one object at a time; numbers are reused after
 * {@link #remove}; {@link #get} is lock-free; numbers start at 1 (0 is never issued).
 */
final class HandleTable<T> {
    private volatile AtomicReferenceArray<T> slots = new AtomicReferenceArray<>(64);
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private int next = 1;

    synchronized long add(T value) {
        int i = free.isEmpty() ? next++ : free.pop();
        if (i >= slots.length()) {
            AtomicReferenceArray<T> bigger = new AtomicReferenceArray<>(Math.max(i + 1, slots.length() * 2));
            for (int k = 0; k < slots.length(); k++) {
                bigger.set(k, slots.get(k));
            }
            slots = bigger;
        }
        slots.set(i, value);
        return i;
    }

    T get(long handle) {
        AtomicReferenceArray<T> s = slots;
        return handle > 0 && handle < s.length() ? s.get((int) handle) : null;
    }

    synchronized T remove(long handle) {
        T v = get(handle);
        if (v != null) {
            slots.set((int) handle, null);
            free.push((int) handle);
        }
        return v;
    }

    synchronized int size() {
        int n = 0;
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }
}
