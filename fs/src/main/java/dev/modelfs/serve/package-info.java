/**
 * What every front end serves and how it answers alike: ServedTree (tree, refresher, mappings, chunk cache, read-
 * ahead), ServePolicy, the view families (StandardViews), modelfs show's plans (ModelPlans), and FrontEnd, the
 * life cycle of a running front end.
 *
 * <p>May import: {@code bytes}, {@code cache}, {@code dialect}, {@code hf}, {@code model}, {@code read}, {@code store}, {@code synth}, {@code telemetry}, {@code tree}, {@code view} (docs/DESIGN.md §2.3, enforced by {@code LayeringTest}).
 */
package dev.modelfs.serve;
