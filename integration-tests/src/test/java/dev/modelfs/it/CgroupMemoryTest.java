package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.testing.Poll;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A memory cap is kept (issue 35; SEMANTICS.md "Memory bounds"): {@code modelfs mount} runs in a cgroup the test
 * creates with a 384 MiB limit (v2 {@code memory.max} where the unified hierarchy has the memory controller, else
 * v1 {@code memory.limit_in_bytes}) and removes; four readers stream about 3 GB of converted bytes (768 MiB of distinct
 * chunks, more than the limit) with the default {@code --cache-size} of 512M. The daemon is never OOM-killed, says in
 * its log that it cut its chunk cache to the limit and that its heap is at most half of it (the JVM sizes its heap to
 * the cgroup's limit itself: the launcher sets no {@code -Xmx}; without the limit the default is a quarter of the
 * machine), and the fp32 bytes are the F16 values written, widened. Then {@code modelfs nfs} in the same cgroup, four
 * NFS clients streaming about 1.5 GB: the same holds.
 */
class CgroupMemoryTest {
    private static final long LIMIT = 384L << 20;

    @TempDir
    Path tmp;

    @Test
    void fourReadersStreamingGigabytesUnderA384MibCgroupNeverGetTheDaemonKilled() throws Exception {
        F16Store written = new F16Store();
        Path store = written.write(tmp.resolve("store"), List.of("a", "b", "c"), 8192);
        Cgroup cg = Cgroup.create("modelfs-test-" + ProcessHandle.current().pid(), LIMIT);
        try {
            Path mp = Files.createDirectories(tmp.resolve("mnt"));
            Path log = tmp.resolve("mnt.log");
            List<String> cmd = new ArrayList<>(List.of("sh", "-c", "echo $$ > '" + cg.procs() + "' && exec \"$0\" \"$@\""));
            cmd.addAll(CliMount.command("mount", "--store", store.toString(), mp.toString()));
            Process p = CliMount.launchCommand(cmd, log, "mount",
                    () -> Files.readString(log).contains("modelfs: serving") && dev.modelfs.fuse.MountTable.isMounted(mp)
                            && CliMount.warmedUp(Files.readString(log)));      // the readers' memory, not the warm-up's
            try (CliMount m = new CliMount(store, mp, p, log)) {
                List<Thread> readers = new ArrayList<>();
                List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int r = 0; r < 4; r++) {
                    int first = r;
                    readers.add(Thread.ofPlatform().start(() -> {
                        byte[] buf = new byte[1 << 20];
                        try {
                            for (int pass = 0; pass < 2; pass++) {
                                for (int i = 0; i < 9; i++) {
                                    int k = (first + i) % 9;
                                    Path f = mp.resolve(List.of("a", "b", "c").get(k / 3))
                                            .resolve(List.of("fp32", "bf16", "fp16").get(k % 3)).resolve("model.safetensors");
                                    try (InputStream in = Files.newInputStream(f)) {
                                        while (in.read(buf) > 0) {
                                            // streamed and dropped
                                        }
                                    }
                                }
                            }
                        } catch (IOException e) {
                            failures.add(e.toString());
                        }
                    }));
                }
                for (Thread t : readers) {
                    t.join(TimeUnit.SECONDS.toMillis(300));
                    assertTrue(!t.isAlive(), "a reader finished within 300 s");
                }
                assertTrue(failures.isEmpty(), failures + "\n" + m.log());
                assertTrue(p.isAlive(), "the daemon lives:\n" + m.log());
                assertEquals(0, cg.oomKills(), "no OOM kill in the cgroup");
                assertTrue(m.log().contains("memory limit of this cgroup: 384 MiB: chunk cache 96 MiB"), m.log());
                assertHeapSized(m.log());
                F16Store.checkFp32(Files.write(tmp.resolve("a32"), Files.readAllBytes(mp.resolve("a/fp32/model.safetensors"))),
                        written.get("a"));
            }
            // the NFS server in the same cgroup, alone (the mount has stopped): four clients stream about 1.5 GB
            int port = CliNfs.freePort();
            Path nfsLog = tmp.resolve("nfs.log");
            List<String> nfsCmd = new ArrayList<>(List.of("sh", "-c", "echo $$ > '" + cg.procs() + "' && exec \"$0\" \"$@\""));
            nfsCmd.addAll(CliMount.command("nfs", "--store", store.toString(), "--port", Integer.toString(port)));
            Process np = CliMount.launchCommand(nfsCmd, nfsLog, "nfs", () -> Files.readString(nfsLog).contains("modelfs: serving NFS")
                    && CliMount.warmedUp(Files.readString(nfsLog)));
            try (CliNfs nfs = CliNfs.launched(port, np, nfsLog)) {
                List<Thread> readers = new ArrayList<>();
                List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
                for (int r = 0; r < 4; r++) {
                    int first = r;
                    readers.add(Thread.ofPlatform().start(() -> {
                        try (NfsRpcClient c = new NfsRpcClient(port)) {
                            byte[] root = c.mount("/").fh();
                            for (int i = 0; i < 9; i++) {
                                int k = (first + i) % 9;
                                byte[] fh = c.walk(root, List.of("a", "b", "c").get(k / 3) + "/" + List.of("fp32", "bf16", "fp16").get(k % 3)
                                        + "/model.safetensors");
                                for (long off = 0; ; off += 1 << 20) {
                                    NfsRpcClient.Read got = c.read(fh, off, 1 << 20);
                                    if (got.status() != 0) {
                                        failures.add("READ status " + got.status());
                                        return;
                                    }
                                    if (got.eof()) {
                                        break;
                                    }
                                }
                            }
                        } catch (IOException e) {
                            failures.add(e.toString());
                        }
                    }));
                }
                for (Thread t : readers) {
                    t.join(TimeUnit.SECONDS.toMillis(300));
                    assertTrue(!t.isAlive(), "an NFS reader finished within 300 s");
                }
                assertTrue(failures.isEmpty(), failures + "\n" + nfs.log());
                assertTrue(np.isAlive(), "the NFS server lives:\n" + nfs.log());
                assertEquals(0, cg.oomKills(), "no OOM kill in the cgroup");
                assertTrue(nfs.log().contains("memory limit of this cgroup: 384 MiB: chunk cache 96 MiB"), nfs.log());
                assertHeapSized(nfs.log());
                try (NfsRpcClient c = new NfsRpcClient(port)) {
                    F16Store.checkFp32(Files.write(tmp.resolve("a32-nfs"), c.readAll(c.walk(c.mount("/").fh(), "a/fp32/model.safetensors"), 1 << 20)),
                            written.get("a"));
                }
            }
        } finally {
            cg.remove();
        }
    }

    /** The log says the heap's bound, and it is at most half the limit (the JVM's own default: a quarter of the machine). */
    private static void assertHeapSized(String log) {
        var heap = java.util.regex.Pattern.compile("heap at most (\\d+) MiB").matcher(log);
        assertTrue(heap.find(), "the log says the heap's bound:\n" + log);
        long heapMib = Long.parseLong(heap.group(1));
        assertTrue(heapMib <= (LIMIT >> 20) / 2, "the heap sized itself to the cgroup's limit: " + heapMib + " MiB");
    }

    /** A memory cgroup this test creates, with a limit, and removes. */
    private record Cgroup(Path dir, boolean v2) {
        static Cgroup create(String name, long limit) throws IOException {
            Path unified = Path.of("/sys/fs/cgroup");
            boolean v2 = Files.exists(unified.resolve("cgroup.controllers"))
                    && Files.readString(unified.resolve("cgroup.controllers")).contains("memory");
            Path dir = Files.createDirectories((v2 ? unified : unified.resolve("memory")).resolve(name));
            Files.writeString(dir.resolve(v2 ? "memory.max" : "memory.limit_in_bytes"), Long.toString(limit));
            if (v2) {
                Files.writeString(dir.resolve("memory.swap.max"), "0");
            }
            return new Cgroup(dir, v2);
        }

        Path procs() {
            return dir.resolve("cgroup.procs");
        }

        long oomKills() throws IOException {
            for (String l : Files.readAllLines(dir.resolve(v2 ? "memory.events" : "memory.oom_control"))) {
                if (l.startsWith("oom_kill ")) {
                    return Long.parseLong(l.substring(9).trim());
                }
            }
            throw new AssertionError("no oom_kill count in " + dir);
        }

        /** Kills what is left in it (only the test's own daemon can be), then removes it. */
        void remove() throws IOException, InterruptedException {
            for (String pid : Files.readAllLines(procs())) {
                ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
            Poll.until("cgroup " + dir + " removed once its processes exited", Duration.ofSeconds(10), () -> {
                try {
                    Files.deleteIfExists(dir);
                    return true;
                } catch (IOException busy) {                     // its processes are still exiting
                    return false;
                }
            });
        }
    }
}
