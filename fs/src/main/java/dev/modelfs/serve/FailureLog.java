package dev.modelfs.serve;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.logging.Logger;

/**
 * The failure lines a served tree has logged, so that each distinct line is logged once (docs/SEMANTICS.md, "Errors
 * and logging") whichever of its policies met the failure: a client's front end or the warm-up's private one.
 *
 * <p>Invariants: a line is logged at most once while it is among the {@value #REMEMBERED} distinct lines remembered
 * (bounded memory; an older line forgotten may be logged again); safe for concurrent use.
 */
public final class FailureLog {
    private static final Logger LOG = Logger.getLogger(ServePolicy.class.getName());
    /** Distinct failure lines remembered. */
    public static final int REMEMBERED = 10_000;

    private final Cache<String, Boolean> logged = Caffeine.newBuilder().maximumSize(REMEMBERED).executor(Runnable::run).build();

    /** Logs {@code line} as a warning unless it was logged before. */
    public void logOnce(String line) {
        if (logged.asMap().putIfAbsent(line, Boolean.TRUE) == null) {
            LOG.warning(line);
        }
    }
}
