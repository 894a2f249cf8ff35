package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.serve.FrontEnd;
import dev.modelfs.serve.ServedTree;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ServeLifecycle}: the serving line (what {@code --daemon} waits for, printed with systemd's {@code READY=1})
 * comes before the front end's warm-up starts, which is started once; a front end that stops serving by itself
 * is stopped (docs/DESIGN.md §2.8, §2.11).
 */
class ServeLifecycleTest {
    /** A front end that records what the life cycle does to it and stops serving once its warm-up has started. */
    private static final class Recording implements FrontEnd {
        final List<String> events = new ArrayList<>();
        final ByteArrayOutputStream out;
        volatile boolean warm;

        Recording(ByteArrayOutputStream out) {
            this.out = out;
        }

        @Override
        public ServedTree served() {
            throw new UnsupportedOperationException("not watched without metrics");
        }

        @Override
        public int openFiles() {
            return 0;
        }

        @Override
        public boolean serving() {
            return !warm;
        }

        @Override
        public synchronized void warmUp() {
            events.add("warmUp after: " + out.toString().strip());
            warm = true;
        }

        @Override
        public synchronized void stop(Duration grace) {
            events.add("stop");
        }

        @Override
        public String conversionSummary() {
            return "0 chunks converted";
        }
    }

    @Test
    void theServingLineComesBeforeTheWarmUpWhichStartsOnce() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream was = System.out;
        Recording front = new Recording(out);
        int status;
        // the life cycle installs its own INT, TERM and HUP handlers: this test JVM's are put back afterwards
        List<sun.misc.Signal> signals = List.of(new sun.misc.Signal("INT"), new sun.misc.Signal("TERM"), new sun.misc.Signal("HUP"));
        List<sun.misc.SignalHandler> handlers = signals.stream().map(sig -> sun.misc.Signal.handle(sig, sun.misc.SignalHandler.SIG_DFL)).toList();
        signals.forEach(sig -> sun.misc.Signal.handle(sig, handlers.get(signals.indexOf(sig))));
        System.setOut(new PrintStream(out, true));
        try {
            status = ServeLifecycle.serve(new MetricsOption(), false, (telemetry, stop) -> front,
                    new ServeLifecycle.Lines(f -> "modelfs: serving test (", f -> "stopped by itself", f -> "stopped"), Duration.ZERO);
        } finally {
            System.setOut(was);
            for (int i = 0; i < signals.size(); i++) {
                sun.misc.Signal.handle(signals.get(i), handlers.get(i));
            }
        }
        assertEquals(0, status);
        assertEquals(List.of("warmUp after: modelfs: serving test ()", "stop"), front.events,
                "the serving line is out when the warm-up starts; then the front end is stopped");
        assertTrue(out.toString().contains("stopped"), out.toString());
    }
}
