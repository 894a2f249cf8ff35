package dev.modelfs.it;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A test class that runs in the suite's second lane: beside the classes that run one after another, never beside
 * another second-lane class (CONTRIBUTING.md "Time budget"). For classes that spend their time on one CPU or
 * waiting (a QEMU guest under TCG, a package build, deliberate pauses of a graceful stop), so the suite's wall time
 * is shorter by theirs while the machine's two CPUs stay the bound. Their methods still run in order, one at a time.
 *
 * <p>Invariants: a second-lane class shares nothing mutable with the others except what is synchronized
 * ({@code Fixture.dir()}, {@code FixtureCache}); every test passes with both CPUs busy (SoakTest shows it), so the
 * class beside it may slow it down but not break it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Execution(ExecutionMode.CONCURRENT)
@ResourceLock("modelfs-second-lane")
@interface SecondLane {}
