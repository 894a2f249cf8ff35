package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.fail;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Linux guest under QEMU with TCG (the nested KVM guest hangs on these machines), booted from the
 * real kernel of Debian's {@code linux-image-amd64} and a busybox initramfs holding the kernel's e1000
 * and NFS client modules ({@code integration-tests/qemu}: {@code build-guest.sh} builds both once into
 * {@code ~/.cache/modelfs/qemu}). The guest reaches the host's loopback as 10.0.2.2 through QEMU's user
 * network; nothing leaves the machine.
 *
 * <p>The guest's {@code init} fetches shell commands over HTTP from a server this class runs on
 * 127.0.0.1 (port on the kernel command line), runs each in one shell, so {@code cd} and
 * {@code exec 3< FILE} persist from one command to the next, and posts back its output (stdout and
 * stderr) and exit status. The serial console goes to a log for failure messages. A missing QEMU or
 * kernel package fails the test.
 */
final class QemuGuest implements AutoCloseable {
    private static final String READY = "MODELFS-GUEST-READY";
    private static final String FAILED = "MODELFS-GUEST-FAILED";
    private static final Result STOPPED = new Result(-1, List.of());

    private final Process qemu;
    private final HttpServer control;
    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    private final BlockingQueue<Result> results = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> console = new LinkedBlockingQueue<>();
    private final Path consoleLog;
    private boolean pending;

    /** A finished guest command: its exit status and its output lines (stdout and stderr). */
    record Result(int exit, List<String> lines) {
        String output() {
            return String.join("\n", lines);
        }
    }

    private QemuGuest(Process qemu, HttpServer control, Path consoleLog) {
        this.qemu = qemu;
        this.control = control;
        this.consoleLog = consoleLog;
        Thread pump = new Thread(this::pumpConsole, "qemu-console");
        pump.setDaemon(true);
        pump.start();
    }

    /** The guest's kernel and initramfs, built (or found in the cache) by {@code qemu/build-guest.sh}. */
    static List<Path> image() throws IOException, InterruptedException {
        String cacheHome = System.getenv("XDG_CACHE_HOME");
        Path cache = (cacheHome == null || cacheHome.isEmpty() ? Path.of(System.getProperty("user.home"), ".cache") : Path.of(cacheHome))
                .resolve("modelfs").resolve("qemu");
        Path script = Path.of("qemu", "build-guest.sh").toAbsolutePath();
        Env.Run r = Env.run(900, List.of("bash", script.toString(), cache.toString()));
        List<Path> files = r.output().lines().filter(l -> l.startsWith("/")).map(Path::of).toList();
        if (r.exit() != 0 || files.size() != 2) {
            fail("cannot build the kernel NFS test guest (Debian's linux-image-amd64 and busybox-static are required):\n" + r.output());
        }
        return files;
    }

    /** Boots the guest and waits until its init script says it is ready (modules loaded, network up). */
    static QemuGuest boot(Path consoleLog) throws IOException, InterruptedException {
        List<Path> image = image();
        String qemuBin = "qemu-system-x86_64";
        if (Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin").split(":")).noneMatch(dir -> Files.isExecutable(Path.of(dir, qemuBin)))) {
            fail(qemuBin + " is not installed (Debian: apt-get install qemu-system-x86; ./test installs it as root)");
        }
        HttpServer control = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        List<String> cmd = List.of(qemuBin, "-accel", "tcg", "-cpu", "max", "-m", "512", "-nographic", "-no-reboot",
                "-kernel", image.get(0).toString(), "-initrd", image.get(1).toString(),
                "-append", "console=ttyS0 quiet loglevel=3 panic=-1 modelfs.ctl=" + control.getAddress().getPort(),
                "-nic", "user,model=e1000");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        QemuGuest guest = new QemuGuest(p, control, consoleLog);
        control.createContext("/next", guest::next);
        control.createContext("/result", guest::result);
        control.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "qemu-control");
            t.setDaemon(true);
            return t;
        }));
        control.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (true) {
            String line = guest.console.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null || line.contains(FAILED)) {
                guest.close();
                fail("the guest did not boot (" + (line == null ? "no " + READY + " within 180 s" : line) + "):\n" + guest.consoleTail());
            }
            if (line.contains(READY)) {
                return guest;
            }
        }
    }

    /**
     * GET /next: the next command, once the test sends one; after 10 minutes without one, 503 (before
     * busybox wget's own 900 s timeout), and the guest asks again.
     */
    private void next(HttpExchange x) throws IOException {
        try (x) {
            String command = commands.poll(10, TimeUnit.MINUTES);
            if (command == null) {
                x.sendResponseHeaders(503, -1);
                return;
            }
            byte[] body = command.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** POST /result?STATUS: the output of the command the guest ran last. */
    private void result(HttpExchange x) throws IOException {
        try (x) {
            String out = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, -1);
            results.add(new Result(Integer.parseInt(x.getRequestURI().getQuery()), out.lines().toList()));
        }
    }

    private void pumpConsole() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(qemu.getInputStream(), StandardCharsets.UTF_8));
             OutputStream log = Files.newOutputStream(consoleLog)) {
            String line;
            while ((line = in.readLine()) != null) {
                line = line.replace("\r", "");
                log.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                log.flush();
                console.add(line);
            }
        } catch (IOException e) {
            console.add("[console lost: " + e + "]");
        }
        results.add(STOPPED);
    }

    /** Runs one shell command in the guest's shell (stdin /dev/null, stderr into the output). */
    Result run(long timeoutSeconds, String command) throws IOException, InterruptedException {
        send(command);
        return await(timeoutSeconds);
    }

    /** Starts a command without waiting for it; {@link #await} collects its result. */
    void send(String command) {
        if (pending) {
            throw new IllegalStateException("a guest command is still running");
        }
        pending = true;
        commands.add(command + "\n");
    }

    /** The result of the command {@link #send} started; fails when it does not finish in time. */
    Result await(long timeoutSeconds) throws IOException, InterruptedException {
        Result r = results.poll(timeoutSeconds, TimeUnit.SECONDS);
        if (r == null || r == STOPPED) {
            fail((r == null ? "guest command timed out after " + timeoutSeconds + " s" : "the guest stopped") + "; console:\n" + consoleTail());
        }
        pending = false;
        return r;
    }

    /** The last 60 lines the console printed. */
    String consoleTail() throws IOException {
        List<String> all = Files.readAllLines(consoleLog);
        return String.join("\n", all.subList(Math.max(0, all.size() - 60), all.size()));
    }

    /** Powers the guest off (forcibly after 20 s) and stops the control server. */
    @Override
    public void close() throws InterruptedException {
        if (qemu.isAlive() && !pending) {
            commands.add("poweroff -f\n");
        }
        if (!qemu.waitFor(20, TimeUnit.SECONDS)) {
            qemu.destroyForcibly();
            qemu.waitFor(10, TimeUnit.SECONDS);
        }
        control.stop(0);
    }
}
