package dev.modelfs.cli;

import dev.modelfs.fuse.MountTable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code modelfs unmount}: unmount a modelfs mount (and only one: any other file system is refused, exit 2)
 * politely, waiting while busy, then lazily; the server keeps serving files already open (its grace period).
 */
@Command(name = "unmount", aliases = "umount", mixinStandardHelpOptions = true, description = "Unmount a modelfs mount point.")
final class UnmountCommand implements Callable<Integer> {
    @Parameters(paramLabel = "MOUNTPOINT")
    Path mountpoint;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "10", description = "how long to wait while busy before a lazy unmount (default: ${DEFAULT-VALUE})")
    long waitSeconds;

    @Override
    public Integer call() throws IOException {
        Path mp = mountpoint.toAbsolutePath().normalize();
        String type = MountTable.fsType(mp).orElseThrow(() -> new IOException(mp + " is not mounted"));
        if (!type.equals(MountTable.MODELFS_TYPE)) {
            throw new IOException(mp + " is a " + type + " mount, not modelfs: not unmounting it");
        }
        if (!MountTable.unmount(mp, waitSeconds * 1000)) {
            throw new IOException("could not unmount " + mp);
        }
        System.out.println("modelfs: unmounted " + mp);
        return 0;
    }
}
