package dev.modelfs.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.logging.Logger;

/**
 * systemd's readiness protocol ({@code sd_notify(3)}): one datagram such as {@code READY=1} to the AF_UNIX socket
 * {@code $NOTIFY_SOCKET} (a path, or an abstract name written {@code @name}). The units run {@code modelfs} as
 * {@code Type=notify}, so {@code systemctl start} returns, and units ordered after modelfs start, only once the
 * mount or the NFS server serves (issue 37).
 *
 * <p>Invariants: without {@code $NOTIFY_SOCKET} it does nothing; a failure to send is one fine-level log line, never an
 * exception; sends only the message it is given.
 */
final class SystemdNotify {
    private static final Logger LOG = Logger.getLogger(SystemdNotify.class.getName());
    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 02000000;
    /** {@code struct sockaddr_un}: a 2-byte family, then a path of up to 108 bytes. */
    private static final int SUN_PATH = 108;

    private SystemdNotify() {}

    /** Tells systemd the service is serving. */
    static void ready(String status) {
        send(System.getenv("NOTIFY_SOCKET"), "READY=1\nSTATUS=" + status.replace('\n', ' '));
    }

    /** Tells systemd the service is stopping. */
    static void stopping() {
        send(System.getenv("NOTIFY_SOCKET"), "STOPPING=1");
    }

    /** Sends {@code message} to the socket {@code socket} (null or empty: nothing); returns whether it was sent. */
    static boolean send(String socket, String message) {
        if (socket == null || socket.isEmpty()) {
            return false;
        }
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        if (path.length >= SUN_PATH || (path[0] != '/' && path[0] != '@')) {
            LOG.fine("NOTIFY_SOCKET " + socket + " is not an AF_UNIX path or abstract name");
            return false;
        }
        if (path[0] == '@') {
            path[0] = 0;                                        // the abstract namespace
        }
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle socketFn = linker.downcallHandle(libc.find("socket").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            MethodHandle sendto = linker.downcallHandle(libc.find("sendto").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            MethodHandle close = linker.downcallHandle(libc.find("close").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            int fd = (int) socketFn.invokeExact(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                LOG.fine("sd_notify: no AF_UNIX datagram socket");
                return false;
            }
            try {
                MemorySegment addr = arena.allocate(2 + SUN_PATH);
                addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
                MemorySegment.copy(path, 0, addr, ValueLayout.JAVA_BYTE, 2, path.length);
                byte[] msg = message.getBytes(StandardCharsets.UTF_8);
                MemorySegment buf = arena.allocateFrom(ValueLayout.JAVA_BYTE, msg);
                long sent = (long) sendto.invokeExact(fd, buf, (long) msg.length, 0, addr, 2 + path.length);
                if (sent != msg.length) {
                    LOG.fine("sd_notify to " + socket + " failed");
                    return false;
                }
                return true;
            } finally {
                int ignored = (int) close.invokeExact(fd);
            }
        } catch (Throwable t) {
            LOG.fine("sd_notify to " + socket + " failed: " + t);
            return false;
        }
    }
}
