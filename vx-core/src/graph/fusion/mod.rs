//! Cross-node tile fusion of user kernels (issue 34, `docs/design/fusion.md`): a group of tiling
//! nodes joined by virtual images runs band by band, `k` rows a call, each intermediate row computed
//! once into a small ring and read while hot.
//!
//! Step 3 of the design: [`plan`] is the pure planner (row-range propagation, step tables, ring
//! capacities, band layout). Nothing calls it yet.

// Wired by step 4 (the pass and the runner).
#![cfg_attr(not(test), allow(dead_code))]

mod plan;

#[cfg(test)]
mod tests;
