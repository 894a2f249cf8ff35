package dev.modelfs.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link GatedTelemetry} passes on every report of {@link Telemetry}, found by reflection so that a report added to
 * the interface later (a default method the gate forgot to forward would silently drop it) fails here: none before
 * {@link GatedTelemetry#open()}, each after it.
 */
class GatedTelemetryTest {
    private static List<Method> reports() {
        List<Method> m = new ArrayList<>();
        for (Method method : Telemetry.class.getMethods()) {
            if (!Modifier.isStatic(method.getModifiers()) && method.getReturnType() == void.class) {
                m.add(method);
            }
        }
        return m;
    }

    private static Object[] argumentsFor(Method m) {
        Object[] args = new Object[m.getParameterCount()];
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < args.length; i++) {
            args[i] = types[i] == long.class ? 1L : types[i] == int.class ? 1 : types[i] == FileKind.class
                    ? FileKind.values()[0] : types[i] == String.class ? "x" : null;
        }
        return args;
    }

    @Test
    void everyReportIsDroppedBeforeOpeningAndPassedOnAfter() throws Exception {
        Set<String> reached = new TreeSet<>();
        Telemetry recorder = (Telemetry) Proxy.newProxyInstance(Telemetry.class.getClassLoader(), new Class<?>[] {Telemetry.class},
                (proxy, method, args) -> {
                    reached.add(method.getName());
                    return method.getReturnType() == java.util.Optional.class ? java.util.Optional.empty() : null;
                });
        GatedTelemetry gate = GatedTelemetry.closed(recorder);
        List<Method> reports = reports();
        assertTrue(reports.size() >= 6, "read, conversion, error, nfsCall, kernelPassthroughOpen, fuseRingRequest: " + reports);
        for (Method m : reports) {
            m.invoke(gate, argumentsFor(m));
        }
        assertEquals(Set.of(), reached, "nothing before open()");
        gate.open();
        Set<String> all = new TreeSet<>();
        for (Method m : reports) {
            m.invoke(gate, argumentsFor(m));
            all.add(m.getName());
        }
        assertEquals(all, reached, "every report after open()");
    }
}
