package dev.modelfs.it;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The one way a test class mounts a store: a real {@code modelfs mount} ({@link CliMount}) made before the
 * class's tests and unmounted after them, in a fresh work directory that is removed once the mount is gone.
 * Register it with {@code @RegisterExtension static final MountedStore mounted = MountedStore.of(...)};
 * lifecycles JUnit does not drive (jqwik's containers) call {@link #start()} and {@link #stop()}.
 */
final class MountedStore implements BeforeAllCallback, AfterAllCallback {
    /** Makes (or finds) the store to mount, given the class's work directory. */
    @FunctionalInterface
    interface StoreMaker {
        Path make(Path work) throws Exception;
    }

    private final String name;
    private final StoreMaker maker;
    private final String[] extra;
    private Path work;
    private CliMount mount;

    private MountedStore(String name, StoreMaker maker, String[] extra) {
        this.name = name;
        this.maker = maker;
        this.extra = extra;
    }

    /** A mount of the store {@code maker} gives, with extra {@code modelfs mount} arguments {@code extra}. */
    static MountedStore of(String name, StoreMaker maker, String... extra) {
        return new MountedStore(name, maker, extra);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        stop();
    }

    void start() throws Exception {
        work = Files.createTempDirectory(name);
        mount = CliMount.start(maker.make(work), work.resolve("mnt"), extra);
    }

    /** Unmounts, then removes the work directory (left in place when the unmount failed, so nothing reaches into a mount). */
    void stop() throws Exception {
        if (mount != null) {
            mount.close();
            mount = null;
        }
        if (work != null) {
            Fixture.deleteTree(work);
            work = null;
        }
    }

    /** The running mount. */
    CliMount cli() {
        return mount;
    }

    /** The class's work directory (the mount point is {@code mnt} in it). */
    Path work() {
        return work;
    }
}
