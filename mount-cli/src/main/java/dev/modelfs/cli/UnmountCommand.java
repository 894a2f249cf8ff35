package dev.modelfs.cli;

import dev.modelfs.fuse.MountTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code modelfs unmount}: unmount politely (waiting while busy), lazily as a last resort. */
@Command(name = "unmount", aliases = "umount", mixinStandardHelpOptions = true, description = "Unmount a modelfs mount point.")
final class UnmountCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MOUNTPOINT")
    Path mountpoint;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "10", description = "how long to wait while busy before a lazy unmount (default: ${DEFAULT-VALUE})")
    long waitSeconds;

    @Override
    public Integer call() throws IOException {
        Path mp = mountpoint.toAbsolutePath().normalize();
        if (!MountTable.isMounted(mp)) {
            throw new IOException(mp + " is not mounted");
        }
        if (!MountTable.unmount(mp, waitSeconds * 1000)) {
            throw new IOException("could not unmount " + mp);
        }
        System.out.println("modelfs: unmounted " + mp);
        return 0;
    }
}
