package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The other way to share: nfs-ganesha (VFS backend, NFSv4 on 127.0.0.1, configuration written here)
 * re-exporting a FUSE mount made with {@code -o allow_other,noforget}, read through libnfs.
 */
class GaneshaReexportTest {
    static final Path GANESHA = Path.of("/usr/bin/ganesha.nfsd");

    @Test
    void ganeshaReexportsEveryReadableFileByteForByte(@TempDir Path tmp) throws Exception {
        CliNfs.requireClients();
        if (!Files.isExecutable(GANESHA)) {
            fail("nfs-ganesha is not installed (Debian: apt-get install nfs-ganesha nfs-ganesha-vfs; ./test installs it as root)");
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            fail("the ganesha re-export test runs as root (ganesha's VFS backend opens files by handle)");
        }
        Path mp = tmp.resolve("mnt");
        try (CliMount mount = CliMount.start(Fixture.store(), mp, "-o", "allow_other,noforget")) {
            int port = CliNfs.freePort();
            Path conf = writeConfig(tmp, mp, port);
            Path log = tmp.resolve("ganesha.log");
            Process g = new ProcessBuilder(GANESHA.toString(), "-F", "-f", conf.toString(), "-L", log.toString(),
                    "-p", tmp.resolve("ganesha.pid").toString(), "-N", "NIV_EVENT")
                    .redirectErrorStream(true).redirectOutput(tmp.resolve("ganesha.out").toFile()).start();
            try {
                awaitListening(g, port, log);
                int same = 0, failedBoth = 0;
                List<Path> files;
                try (Stream<Path> s = Files.walk(mp)) {
                    files = s.filter(Files::isRegularFile).sorted().toList();
                }
                for (Path f : files) {
                    String rel = mp.relativize(f).toString();
                    byte[] fuse;
                    try {
                        fuse = Files.readAllBytes(f);
                    } catch (IOException e) {
                        fuse = null;
                    }
                    CliNfs.Out cat = CliNfs.run(60, "nfs-cat", url(rel, port));
                    if (fuse == null) {
                        assertNotEquals(0, cat.exit(), rel + " fails on the mount but was read through ganesha");
                        failedBoth++;
                    } else {
                        assertEquals(0, cat.exit(), rel + ": " + cat.stderr() + "\n" + tail(log));
                        assertArrayEquals(fuse, cat.stdout(), rel);
                        same++;
                    }
                }
                assertTrue(same > 100, "files compared: " + same);
                assertTrue(failedBoth >= 2, "broken models fail through the re-export too: " + failedBoth);
            } finally {
                g.destroy();
                if (!g.waitFor(20, TimeUnit.SECONDS)) {
                    g.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** libnfs URL of a file under the export's pseudo path /models, NFSv4 (no MOUNT protocol, no portmapper). */
    static String url(String rel, int port) {
        String v3 = CliNfs.url("models/" + rel, port);
        return v3.substring(0, v3.indexOf('?')) + "?version=4&nfsport=" + port;
    }

    static Path writeConfig(Path tmp, Path mp, int port) throws IOException {
        Path rec = Files.createDirectories(tmp.resolve("recovery"));
        return Files.writeString(tmp.resolve("ganesha.conf"), """
                NFS_CORE_PARAM {
                    Protocols = 4;
                    NFS_Port = %d;
                    Bind_addr = 127.0.0.1;
                    Enable_NLM = false;
                    Enable_RQUOTA = false;
                    Enable_UDP = false;
                }
                NFSV4 {
                    Graceless = true;
                    RecoveryRoot = %s;
                }
                EXPORT {
                    Export_Id = 1;
                    Path = %s;
                    Pseudo = /models;
                    Access_Type = RO;
                    Squash = No_Root_Squash;
                    SecType = sys;
                    Protocols = 4;
                    Transports = TCP;
                    FSAL { Name = VFS; }
                }
                """.formatted(port, rec, mp));
    }

    static void awaitListening(Process g, int port, Path log) throws Exception {
        Poll.until("ganesha.nfsd listening on " + port, Duration.ofSeconds(30), () -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return true;
            } catch (IOException e) {
                if (!g.isAlive()) {
                    fail("ganesha.nfsd exited with " + g.exitValue() + ":\n" + tail(log));
                }
                return false;
            }
        }, () -> {
            try {
                return tail(log);
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        });
    }

    static String tail(Path log) throws IOException {
        if (!Files.exists(log)) {
            return "(no log)";
        }
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }
}
