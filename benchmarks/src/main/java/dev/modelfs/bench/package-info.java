/**
 * JMH benchmarks of the kernels and the read path; test-only, run by scripts/bench.sh.
 *
 * <p>May import: any modelfs package (test-only code) (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.bench;
