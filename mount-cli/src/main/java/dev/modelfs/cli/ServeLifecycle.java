package dev.modelfs.cli;

import dev.modelfs.cli.metrics.PrometheusTelemetry;
import dev.modelfs.serve.FrontEnd;
import dev.modelfs.telemetry.Telemetry;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import sun.misc.Signal;

/**
 * The foreground life of a front end, one for {@code mount} and {@code nfs}: signal handlers first (a signal that
 * arrives while starting must still stop politely), the metrics endpoint, the front end started, its gauges
 * watched, the serving line printed (and systemd told it is ready), the front end's warm-up started behind the
 * served tree, then serving until SIGINT/SIGTERM or until the front end stops serving by
 * itself (a mount unmounted from outside), and a stop with the grace period. SIGHUP is ignored.
 *
 * <p>Invariants: the metrics endpoint is closed on every path out, after the front end; the serving line is printed
 * only once the front end serves (what {@code --daemon} and the tests wait for), and before its warm-up starts, so
 * neither it nor systemd's READY waits for the warm-up (docs/DESIGN.md §2.8).
 */
final class ServeLifecycle {
    /** Starts a front end reporting to {@code telemetry}; {@code stopRequested} holds once a stop signal arrived. */
    interface Starter {
        FrontEnd start(Telemetry telemetry, BooleanSupplier stopRequested) throws IOException;
    }

    /**
     * The lines a front end prints: {@code serving} once it serves (the metrics text and a closing parenthesis are
     * appended), {@code stoppedByItself} when it stopped serving without a signal, {@code stopped} at the end.
     */
    record Lines(Function<FrontEnd, String> serving, Function<FrontEnd, String> stoppedByItself, Function<FrontEnd, String> stopped) {}

    private ServeLifecycle() {}

    /** Serves until stopped; returns the exit status. */
    static int serve(MetricsOption metrics, boolean nfs, Starter starter, Lines lines, Duration grace)
            throws IOException, InterruptedException {
        CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("INT"), s -> stop.countDown());
        Signal.handle(new Signal("TERM"), s -> stop.countDown());
        Signal.handle(new Signal("HUP"), s -> { });
        PrometheusTelemetry telemetry = metrics.start(nfs);
        FrontEnd frontEnd;
        try {
            frontEnd = starter.start(MetricsOption.orNone(telemetry), () -> stop.getCount() == 0);
        } catch (IOException | RuntimeException e) {
            if (telemetry != null) {
                telemetry.close();
            }
            throw e;
        }
        if (telemetry != null) {
            telemetry.watch(frontEnd.served(), frontEnd::openFiles);
        }
        String serving = lines.serving().apply(frontEnd) + MetricsOption.describe(telemetry) + ")";
        System.out.println(serving);
        System.out.flush();
        SystemdNotify.ready(serving);
        frontEnd.warmUp();                              // behind the served tree: ready does not wait for it
        while (!stop.await(1, TimeUnit.SECONDS)) {
            if (!frontEnd.serving()) {
                System.err.println(lines.stoppedByItself().apply(frontEnd));
                break;
            }
        }
        SystemdNotify.stopping();
        frontEnd.stop(grace);
        if (telemetry != null) {
            telemetry.close();
        }
        System.out.println(lines.stopped().apply(frontEnd));
        return 0;
    }
}
