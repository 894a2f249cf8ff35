package dev.modelfs.model;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory budget of the structures built from store bytes (docs/SEMANTICS.md "Memory bounds"),
 * counted in tensors: a model's tensor tables and everything the views build from them (safetensors
 * and GGUF headers, segments, the Hugging Face folder) grow with its tensor count, a few KiB per tensor.
 * A model may hold at most {@link #PER_MODEL} tensors, and all models whose directories are built at
 * most {@link #TOTAL}; a model over either gets no tables (its converted files are absent, one log line)
 * and never costs the daemon more.
 *
 * <p>Invariants: {@link #used()} is the sum of what live accounts hold and never exceeds the total; an
 * account's reservation is all or nothing; a released account holds nothing and reserves nothing again
 * (a model directory built after its model left the tree is not counted). Thread-safe.
 */
public final class TableBudget {
    /** Most tensors of one model: real models have up to a few thousand (tens of thousands split per expert). */
    public static final long PER_MODEL = 65_536;
    /** Most tensors of all built model directories together. */
    public static final long TOTAL = 262_144;

    private final long perModel;
    private final long total;
    private final AtomicLong used = new AtomicLong();

    public TableBudget(long perModel, long total) {
        this.perModel = perModel;
        this.total = total;
    }

    /** The budget of a served tree: {@link #PER_MODEL} and {@link #TOTAL}. */
    public static TableBudget standard() {
        return new TableBudget(PER_MODEL, TOTAL);
    }

    /** What one model's directory may reserve, until {@link Account#release()}. */
    public Account account() {
        return new Account();
    }

    public long used() {
        return used.get();
    }

    /** A reservation refused: the message says which limit and by how much. */
    public static final class OverBudget extends Exception {
        OverBudget(String message) {
            super(message, null, false, false);
        }
    }

    /** One model's share of the budget. */
    public final class Account {
        private long held;
        private boolean released;

        private Account() {}

        /** Adds {@code tensors} to this model's reservation, or throws and reserves nothing. */
        public synchronized void reserve(long tensors) throws OverBudget {
            if (released) {
                throw new OverBudget("the model left the tree");
            }
            if (tensors < 0 || held + tensors > perModel) {
                throw new OverBudget("over the per-model memory budget: " + (held + tensors) + " tensors, at most " + perModel);
            }
            long now = used.addAndGet(tensors);
            if (now > total) {
                used.addAndGet(-tensors);
                throw new OverBudget("over the mount's memory budget: " + (now - tensors) + " of " + total
                        + " tensors in use by other models, " + tensors + " more asked");
            }
            held += tensors;
        }

        /** Gives back everything reserved so far (before building the model's tables again). */
        public synchronized void clear() {
            used.addAndGet(-held);
            held = 0;
        }

        /** Gives back everything, for good: the model left the tree. */
        public synchronized void release() {
            clear();
            released = true;
        }

        public synchronized long held() {
            return held;
        }
    }
}
