package dev.modelfs.format;

/**
 * Where a parser of untrusted bytes counts the heap it is about to allocate (docs/SEMANTICS.md "Memory
 * bounds"): it calls {@link #charge} with a conservative estimate <em>before</em> allocating, so a header
 * that would take more than its budget stops the parse instead of filling the heap.
 */
@FunctionalInterface
public interface HeapCharge {
    /** Counts nothing (a caller with a budget of its own, or a test). */
    HeapCharge NONE = bytes -> { };

    /**
     * Counts {@code bytes} more.
     *
     * @throws FormatException when they do not fit: the parse stops, its message names the budget
     */
    void charge(long bytes);
}
