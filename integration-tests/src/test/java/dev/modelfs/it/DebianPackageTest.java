package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Debian package of {@code scripts/package.sh}, installed on this machine with {@code dpkg -i}:
 * the installed {@code /usr/bin/modelfs} (its own jlinked runtime, no JDK) mounts and serves the test
 * store, {@code systemd-analyze verify} accepts its units, its {@code --help} and man page carry every
 * command and option of the README's CLI reference, and {@code dpkg --purge} leaves nothing behind.
 * The package owns only /usr/bin/modelfs, /usr/lib/modelfs, its units, man page and doc folder, which
 * nothing else on the machine uses; the test purges it whatever happens.
 */
@SecondLane
class DebianPackageTest {
    static final Path TOP = Path.of("..").toAbsolutePath().normalize();
    static final List<String> INSTALLED = List.of("/usr/bin/modelfs");
    static final List<String> UNITS = List.of("/usr/lib/systemd/system/modelfs-mount.service", "/usr/lib/systemd/system/modelfs-nfs.service");

    @Test
    void installsServesVerifiesAndPurgesCleanly(@TempDir Path tmp) throws Exception {
        CliNfs.requireClients();
        Env.requireFuse();
        purgeIfInstalled();
        Path deb = build(tmp.resolve("deb"));
        List<String> content = packagePaths(deb);
        Set<String> before = traces();
        Set<String> existedBefore = new TreeSet<>(content.stream().filter(p -> Files.exists(Path.of(p))).toList());
        assertFalse(existedBefore.contains("/usr/lib/modelfs"), "/usr/lib/modelfs exists before the install");
        try {
            Env.Run install = Env.run(300, List.of("dpkg", "-i", deb.toString()));
            assertEquals(0, install.exit(), "dpkg -i:\n" + install.output());
            assertTrue(Files.isExecutable(Path.of("/usr/bin/modelfs")));
            assertTrue(Files.isExecutable(Path.of("/usr/lib/modelfs/lib/runtime/bin/java")), "the jlinked runtime");
            servesTheStore(tmp);
            unitsVerify();
            helpAndManPageMatchTheReadme();
        } finally {
            Env.Run purge = Env.run(300, List.of("dpkg", "--purge", "modelfs"));
            assertEquals(0, purge.exit(), "dpkg --purge:\n" + purge.output());
        }
        for (String p : content) {
            assertEquals(existedBefore.contains(p), Files.exists(Path.of(p)), "after the purge: " + p);
        }
        assertEquals(before, traces(), "files named modelfs in /usr, /etc and dpkg's database");
        Env.Run status = Env.run(60, List.of("dpkg-query", "-W", "-f=${db:Status-Status}", "modelfs"));
        assertTrue(status.exit() != 0 || status.output().trim().equals("not-installed"), "dpkg still knows modelfs: " + status.output());
    }

    /** Runs scripts/package.sh; requires modelfs_VERSION_amd64.deb with the pom's version. */
    static Path build(Path out) throws Exception {
        Env.Run r = Env.run(900, List.of("bash", TOP.resolve("scripts/package.sh").toString(), out.toString()));
        assertEquals(0, r.exit(), "scripts/package.sh:\n" + r.output());
        Path deb = Path.of(r.output().lines().reduce((a, b) -> b).orElse("").trim());
        String pom = Files.readString(TOP.resolve("pom.xml"));
        Matcher v = Pattern.compile("(?m)^  <version>([^<]+)</version>").matcher(pom);
        assertTrue(v.find(), "the pom's version");
        assertEquals("modelfs_" + v.group(1).replace('-', '~') + "_amd64.deb", deb.getFileName().toString());
        assertTrue(Files.isRegularFile(deb), deb.toString());
        Env.Run info = Env.run(60, List.of("dpkg-deb", "-f", deb.toString(), "Depends"));
        assertTrue(info.output().matches("(?s).*\\bfuse\\b.*") && info.output().contains("libfuse2"), "Depends: " + info.output());
        return deb;
    }

    /** The absolute paths in the package (dpkg-deb -c). */
    static List<String> packagePaths(Path deb) throws Exception {
        Env.Run r = Env.run(60, List.of("dpkg-deb", "-c", deb.toString()));
        assertEquals(0, r.exit(), r.output());
        List<String> paths = new ArrayList<>();
        for (String line : r.output().lines().toList()) {
            String name = line.replaceFirst("^(\\S+\\s+){5}", "").replaceFirst(" -> .*$", "");
            assertTrue(name.startsWith("./"), "dpkg-deb -c line: " + line);
            String p = name.substring(1).replaceFirst("/$", "");
            if (!p.isEmpty()) {
                paths.add(p);
            }
        }
        for (String must : List.of("/usr/bin/modelfs", "/usr/lib/modelfs", "/usr/share/man/man1/modelfs.1.gz", UNITS.get(0), UNITS.get(1))) {
            assertTrue(paths.contains(must), "the package has " + must + ": " + paths.size() + " paths");
        }
        return paths;
    }

    /** Files and folders whose name contains "modelfs" under /usr, /etc and dpkg's database. */
    static Set<String> traces() throws IOException {
        Set<String> found = new TreeSet<>();
        for (String root : List.of("/usr/bin", "/usr/lib", "/usr/share/man", "/usr/share/doc", "/etc", "/var/lib/dpkg/info")) {
            try (Stream<Path> s = Files.walk(Path.of(root), 3)) {
                s.filter(p -> p.getFileName() != null && p.getFileName().toString().contains("modelfs")).forEach(p -> found.add(p.toString()));
            } catch (java.io.UncheckedIOException e) {
                // a folder removed while walking (other tests run apt): not ours
            }
        }
        return found;
    }

    static void purgeIfInstalled() throws Exception {
        Env.Run status = Env.run(60, List.of("dpkg-query", "-W", "-f=${db:Status-Status}", "modelfs"));
        if (status.exit() == 0 && !status.output().trim().equals("not-installed")) {
            Env.Run purge = Env.run(300, List.of("dpkg", "--purge", "modelfs"));
            assertEquals(0, purge.exit(), "purging a modelfs package left by an earlier run:\n" + purge.output());
        }
    }

    /** The installed command mounts the test store (checked by check_tree.py) and serves it over NFS. */
    static void servesTheStore(Path tmp) throws Exception {
        Env.Run version = Env.run(60, List.of("/usr/bin/modelfs", "--version"));
        assertEquals(0, version.exit(), version.output());
        assertTrue(version.output().startsWith("modelfs "), version.output());
        Env.Run usage = Env.run(60, List.of("/usr/bin/modelfs", "mount", "--no-such-option", tmp.resolve("nowhere").toString()));
        assertEquals(1, usage.exit(), usage.output());
        assertTrue(usage.output().contains("--no-such-option"), "the usage error names the option:\n" + usage.output());
        assertFalse(usage.output().contains("incubator"), "no JVM warning on a usage error:\n" + usage.output());
        // the serving commands' launcher starts from the AOT cache trained at package time (scripts/package.sh)
        Env.Run aot = Env.run(60, List.of("/usr/lib/modelfs/bin/modelfs-vector", "--version"), java.util.Map.of("JAVA_TOOL_OPTIONS", "-Xlog:class+load"));
        assertEquals(0, aot.exit(), aot.output());
        assertTrue(aot.output().contains("dev.modelfs.cli.Main source: shared objects file"),
                "modelfs's classes come from /usr/lib/modelfs/lib/app/modelfs-vector.aot:\n" + aot.output().lines().filter(l -> l.contains("dev.modelfs")).toList());
        try (CliMount mount = CliMount.startWith(INSTALLED, Fixture.store(), tmp.resolve("mnt"))) {
            assertTrue(mount.log().contains("vector kernels ("), "mount and nfs run the Vector API kernels:\n" + mount.log());
            mount.requireChecker(600, "check_tree.py", Fixture.dir().toString());
            int port = CliNfs.freePort();
            Path log = tmp.resolve("nfs.log");
            Process nfs = CliMount.launchCommand(List.of("/usr/bin/modelfs", "nfs", "--store", Fixture.store().toString(), "--port", Integer.toString(port)),
                    log, "nfs", () -> Files.readString(log).contains("modelfs: serving NFS"));
            try {
                for (String file : List.of(KernelNfsClientTest.WHOLE_BLOB, KernelNfsClientTest.CONVERTED)) {
                    CliNfs.Out cat = CliNfs.run(120, "nfs-cat", CliNfs.url(file, port));
                    assertEquals(0, cat.exit(), file + ": " + cat.stderr());
                    assertArrayEquals(Files.readAllBytes(mount.mountpoint.resolve(file)), cat.stdout(), file);
                }
            } finally {
                CliMount.terminate(nfs, log, () -> { });
            }
        }
        // --daemon starts the runtime's own java again, in the background
        Path mnt = Files.createDirectories(tmp.resolve("daemon"));
        Env.Run daemon = Env.run(60, List.of("/usr/bin/modelfs", "mount", "--store", Fixture.store().toString(), "--daemon",
                "--log", tmp.resolve("daemon.log").toString(), mnt.toString()));
        assertEquals(0, daemon.exit(), daemon.output());
        try {
            assertTrue(Files.isRegularFile(mnt.resolve(KernelNfsClientTest.WHOLE_BLOB)), "the daemon's mount serves the store");
        } finally {
            Env.Run unmount = Env.run(60, List.of("/usr/bin/modelfs", "unmount", mnt.toString()));
            assertEquals(0, unmount.exit(), unmount.output());
        }
    }

    /** systemd-analyze verify accepts both installed units. */
    static void unitsVerify() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("systemd-analyze", "verify"));
        cmd.addAll(UNITS);
        Env.Run r;
        try {
            r = Env.run(120, cmd);
        } catch (IOException e) {
            fail("systemd-analyze is not installed (Debian: apt-get install systemd; ./test installs it as root): " + e.getMessage());
            return;
        }
        assertEquals(0, r.exit(), "systemd-analyze verify:\n" + r.output());
        for (String unit : UNITS) {
            assertTrue(Files.readString(Path.of(unit)).contains("ExecStart=/usr/bin/modelfs "), unit + " runs the installed command");
        }
    }

    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])(--[a-z][a-z-]*|-o)\\b");

    /**
     * Every line of the README's CLI reference ({@code modelfs CMD [options]}): the installed
     * {@code modelfs CMD --help} and the man page name the command and each of its options.
     */
    static void helpAndManPageMatchTheReadme() throws Exception {
        String readme = Files.readString(TOP.resolve("README.md"));
        int section = readme.indexOf("## CLI reference");
        assertTrue(section >= 0, "README has a CLI reference");
        int start = readme.indexOf("```\n", section) + 4;
        String block = readme.substring(start, readme.indexOf("```", start));
        String man;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(Path.of("/usr/share/man/man1/modelfs.1.gz")))) {
            man = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).replace("\\-", "-");
        }
        int commands = 0;
        for (String line : block.lines().filter(l -> l.startsWith("modelfs ")).toList()) {
            String sub = line.split("\\s+")[1];
            List<String> cmd = new ArrayList<>(List.of("/usr/bin/modelfs"));
            if (!sub.startsWith("-")) {
                cmd.add(sub);
                assertTrue(man.contains(".SH \"modelfs " + sub + "\""), "the man page has a section for " + sub);
                commands++;
            }
            cmd.add("--help");
            Env.Run help = Env.run(60, cmd);
            assertEquals(0, help.exit(), String.join(" ", cmd) + ":\n" + help.output());
            Matcher m = OPTION.matcher(line.replaceFirst("^modelfs \\S+", ""));
            while (m.find()) {
                assertTrue(help.output().contains(m.group(1)), String.join(" ", cmd) + " does not mention " + m.group(1) + " (README: " + line + ")");
                assertTrue(man.contains(m.group(1)), "the man page does not mention " + m.group(1));
            }
        }
        assertTrue(commands >= 7, "commands in the README's CLI reference: " + commands);
    }
}
