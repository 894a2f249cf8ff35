package dev.modelfs.model;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.HeapCharge;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory budget, in bytes of heap, of every structure built from store bytes (docs/SEMANTICS.md
 * "Memory bounds"): GGUF metadata as its parser allocates it ({@link Account#asCharge}), tensor tables
 * and what the views build from them at {@link #TENSOR_BYTES} a tensor, rebuilt files (synthesized
 * headers, tokenizers, JSON) at their size and directory entries at {@link #ENTRY_BYTES} each. A model
 * may hold at most {@link #PER_MODEL} bytes, all models whose directories are built at most
 * {@link #TOTAL}; a model over either gets no converted files (one log line) and never costs the daemon more.
 *
 * <p>Figures are conservative estimates of retained heap (measured per tensor with the JVM's class
 * histogram over a built directory), not exact sizes. Invariants: {@link #used()} is the sum of what live
 * accounts hold and never exceeds the total; a reservation is all or nothing; a released account holds
 * nothing and reserves nothing again (a model directory built after its model left the tree is not
 * counted). Thread-safe.
 */
public final class MemoryBudget {
    /** Most heap for one model: a 200,000-tensor safetensors model, all views, fits with room to spare. */
    public static final long PER_MODEL = 384L << 20;
    /** Most heap for all built model directories together. */
    public static final long TOTAL = 1L << 30;
    /**
     * Heap per tensor of a built model directory (its table and every view's segments and converted data;
     * synthesized headers are not included: they are charged at their size). Measured over directories of
     * 100,000-200,000 tiny tensors (all views): about 700 bytes a tensor for a safetensors model and 980 for
     * a GGUF, headers included, which this figure plus the headers' size covers.
     */
    public static final long TENSOR_BYTES = 768;
    /** Heap per file or folder of a model directory (node, byte source, map entry, name). */
    public static final long ENTRY_BYTES = 256;

    private final long perModel;
    private final long total;
    private final AtomicLong used = new AtomicLong();

    public MemoryBudget(long perModel, long total) {
        this.perModel = perModel;
        this.total = total;
    }

    /** The budget of a served tree: {@link #PER_MODEL} and {@link #TOTAL}. */
    public static MemoryBudget standard() {
        return new MemoryBudget(PER_MODEL, TOTAL);
    }

    /** What one model's directory may reserve, until {@link Account#release()}. */
    public Account account() {
        return new Account();
    }

    /** Bytes held by all live accounts. */
    public long used() {
        return used.get();
    }

    /** {@code n} tensors' share in bytes, saturating (a hostile count never overflows into a small figure). */
    public static long tensorBytes(long n) {
        return n < 0 || n > Long.MAX_VALUE / TENSOR_BYTES ? Long.MAX_VALUE : n * TENSOR_BYTES;
    }

    /** A reservation refused: the message names the budget, what asked and how much. */
    public static final class OverBudget extends Exception {
        OverBudget(String message) {
            super(message, null, false, false);
        }
    }

    /** A charge refused while a model directory is assembled ({@link Account#asDirectoryCharge()}): the directory is built again without converted files. */
    public static final class Exceeded extends RuntimeException {
        Exceeded(String message) {
            super(message, null, false, false);
        }
    }

    /** One model's share of the budget. */
    public final class Account {
        private long held;
        private boolean released;

        private Account() {}

        /** Adds {@code bytes} (for {@code what}, e.g. {@code "1000 tensors"}) to this model's share, or throws and reserves nothing. */
        public synchronized void reserve(long bytes, String what) throws OverBudget {
            if (released) {
                throw new OverBudget("the model left the tree");
            }
            if (bytes < 0 || bytes > perModel - held) {
                throw new OverBudget("over the per-model memory budget: " + what + " (" + (bytes < 0 ? "?" : bytes) + " bytes, "
                        + held + " held), at most " + perModel + " bytes");
            }
            long now;
            do {                                 // never past the total, not even for a moment
                now = used.get();
                if (bytes > total - now) {
                    throw new OverBudget("over the mount's memory budget: " + what + " (" + bytes + " bytes), "
                            + now + " of " + total + " bytes in use by all models");
                }
            } while (!used.compareAndSet(now, now + bytes));
            held += bytes;
        }

        /** Reserves {@code n} tensors at {@link #TENSOR_BYTES} each. */
        public void reserveTensors(long n) throws OverBudget {
            reserve(tensorBytes(n), n + " tensors");
        }

        /** This account as a parser's {@link HeapCharge}: over the budget is a {@link FormatException} naming it. */
        public HeapCharge asCharge(String what) {
            return bytes -> {
                try {
                    reserve(bytes, what);
                } catch (OverBudget e) {
                    throw new FormatException(e.getMessage());
                }
            };
        }

        /** This account as the charge of a model directory's files and folders: over the budget is an {@link Exceeded}. */
        public HeapCharge asDirectoryCharge() {
            return bytes -> {
                try {
                    reserve(bytes, "the model directory's files");
                } catch (OverBudget e) {
                    throw new Exceeded(e.getMessage());
                }
            };
        }

        /** Gives back everything reserved so far (before building the model's directory again). */
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
