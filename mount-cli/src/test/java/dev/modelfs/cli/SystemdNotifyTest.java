package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SystemdNotify} against a real AF_UNIX datagram socket bound here, as systemd binds {@code $NOTIFY_SOCKET}. */
class SystemdNotifyTest {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final MethodHandle SOCKET = fn("socket", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle BIND = fn("bind", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle RECV = fn("recv", FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle CLOSE = fn("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final int MSG_DONTWAIT = 0x40;

    private static MethodHandle fn(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(LIBC.find(name).orElseThrow(), fd);
    }

    /** A datagram socket bound at {@code name} (a path, or {@code @abstract}). */
    private record Receiver(int fd, Arena arena) implements AutoCloseable {
        static Receiver bind(String name) throws Throwable {
            Arena arena = Arena.ofConfined();
            int fd = (int) SOCKET.invokeExact(1, 2, 0);
            assertTrue(fd >= 0);
            byte[] path = name.getBytes(StandardCharsets.UTF_8);
            if (path[0] == '@') {
                path[0] = 0;
            }
            MemorySegment addr = arena.allocate(110);
            addr.set(ValueLayout.JAVA_SHORT, 0, (short) 1);
            MemorySegment.copy(path, 0, addr, ValueLayout.JAVA_BYTE, 2, path.length);
            assertEquals(0, (int) BIND.invokeExact(fd, addr, 2 + path.length), "bind " + name);
            return new Receiver(fd, arena);
        }

        /** The datagram waiting, or null (the sender's sendto has returned, so a sent datagram is already queued). */
        String poll() throws Throwable {
            MemorySegment buf = arena.allocate(4096);
            long n = (long) RECV.invokeExact(fd, buf, 4096L, MSG_DONTWAIT);
            return n < 0 ? null : new String(buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        }

        @Override
        public void close() throws Exception {
            try {
                int ignored = (int) CLOSE.invokeExact(fd);
            } catch (Throwable t) {
                throw new Exception(t);
            }
            arena.close();
        }
    }

    @Test
    void readinessReachesAPathSocketAndAnAbstractOne(@TempDir Path dir) throws Throwable {
        String path = dir.resolve("notify").toString();
        try (Receiver r = Receiver.bind(path)) {
            assertTrue(SystemdNotify.send(path, "READY=1\nSTATUS=serving"));
            assertEquals("READY=1\nSTATUS=serving", r.poll());
            assertEquals(null, r.poll(), "one datagram per call");
        }
        String abstractName = "@modelfs-notify-test-" + ProcessHandle.current().pid();
        try (Receiver r = Receiver.bind(abstractName)) {
            assertTrue(SystemdNotify.send(abstractName, "STOPPING=1"));
            assertEquals("STOPPING=1", r.poll());
        }
    }

    @Test
    void withoutASocketNothingIsSentAndNothingFails(@TempDir Path dir) {
        assertFalse(SystemdNotify.send(null, "READY=1"));
        assertFalse(SystemdNotify.send("", "READY=1"));
        assertFalse(SystemdNotify.send("relative/path", "READY=1"), "not an AF_UNIX path");
        assertFalse(SystemdNotify.send(dir.resolve("nobody-listens").toString(), "READY=1"), "no socket bound there");
    }
}
