/**
 * Support shared by the tests of every module (through the {@code modelfs-cache} test jar): {@link
 * dev.modelfs.testing.Poll}, waiting on a condition with a bound instead of sleeping. Test code only; it imports
 * nothing of modelfs.
 */
package dev.modelfs.testing;
