package dev.modelfs.cli.metrics;

import dev.modelfs.fuse.ModelFs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.Optional;

/**
 * Finds the metrics endpoint of a mount: the root of a mount started with {@code --metrics} carries it in
 * the extended attribute {@value ModelFs#METRICS_XATTR} ({@code HOST:PORT}), so any process that can read the
 * mount can find its figures, and the answer can never be stale.
 */
public final class MountMetrics {
    /** The attribute's name in Java's user namespace (without {@code user.}). */
    private static final String NAME = ModelFs.METRICS_XATTR.substring("user.".length());

    private MountMetrics() {}

    /** {@code HOST:PORT} of the metrics of the mount at {@code mountpoint}; empty when it has none or is no modelfs mount. */
    public static Optional<String> endpoint(Path mountpoint) {
        try {
            UserDefinedFileAttributeView view = Files.getFileAttributeView(mountpoint, UserDefinedFileAttributeView.class);
            if (view == null || !view.list().contains(NAME)) {
                return Optional.empty();
            }
            ByteBuffer b = ByteBuffer.allocate(view.size(NAME));
            view.read(NAME, b);
            return Optional.of(new String(b.array(), 0, b.position(), StandardCharsets.UTF_8));
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }
}
