package dev.modelfs.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The real uid/gid of this process, from /proc/self/status (no native calls needed). */
final class UnixIds {
    private UnixIds() {}

    static long uid() {
        return field("Uid:");
    }

    static long gid() {
        return field("Gid:");
    }

    private static long field(String name) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(name)) {
                    return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return 0;
    }
}
