//! Cross-node tile fusion of user kernels (`docs/book/src/fusion.md`; the design:
//! `docs/design/fusion.md`): a group of tiling nodes joined by virtual images runs as one unit,
//! step by step down the image, `k` rows of its last nodes a step, each intermediate row computed
//! once into a small ring (a line buffer) and read while hot. The fused images take no image
//! buffer.
//!
//! - [`plan`]: the pure planner (row ranges, step tables, ring capacities).
//! - [`group`]: a [`FusedGroup`] built from its members' specs at verify (the pass that forms the
//!   groups is `graph/verify/fusion.rs`): the step table, the rings, the pointer pools.
//! - [`run`]: the runner, one group on the calling thread; no allocation.
//! - [`report`]: what the application sees ([`FusionReport`]).
//!
//! [`FusionState`] is what a verified graph keeps: the groups, which node leads or follows one,
//! and the report.

use std::collections::HashSet;

use crate::data::reference::Reference;

mod group;
// A few of the planner's accessors serve only its tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) mod plan;
pub(super) mod report;
mod run;

#[cfg(test)]
mod tests;

pub(crate) use group::{FusedGroup, MAX_OUTSIDE_IMAGES, ParamRole};
pub(in crate::graph) use group::{ImageSpec, MemberSpec};
pub use report::{FusedGroupReport, FusionRefusal, FusionReport, UnfusedNode};
pub(crate) use run::run_group;

/// What the `fusion` pass left for the executor and the other passes.
#[derive(Default)]
pub(super) struct FusionState {
    /// The fused groups.
    pub(super) groups: Vec<FusedGroup>,
    /// By node index, the group it belongs to (`u32::MAX`: none). Empty when there is no group.
    group_of: Vec<u32>,
    /// The ids of the images that live only in line buffers.
    fused_images: HashSet<u64>,
    /// What the application sees.
    pub(super) report: FusionReport,
}

impl FusionState {
    /// The state of a verification that formed `groups` over a graph of `nodes` node slots.
    pub(super) fn new(groups: Vec<FusedGroup>, nodes: usize, report: FusionReport) -> FusionState {
        let mut group_of = if groups.is_empty() { Vec::new() } else { vec![u32::MAX; nodes] };
        let mut fused_images = HashSet::new();
        for (g, group) in groups.iter().enumerate() {
            for &n in group.nodes() {
                group_of[n] = g as u32;
            }
            fused_images.extend(group.fused_image_ids());
        }
        FusionState { groups, group_of, fused_images, report }
    }

    /// `r` lives only in a group's line buffers (it needs no buffer of its own).
    pub(super) fn is_fused(&self, r: &Reference) -> bool {
        !self.fused_images.is_empty() && self.fused_images.contains(&r.id())
    }

    /// The group node `n` leads (its first member), if any: running `n` runs the group.
    pub(super) fn led_by(&self, n: usize) -> Option<&FusedGroup> {
        let g = self.groups.get(*self.group_of.get(n)? as usize)?;
        (g.nodes()[0] == n).then_some(g)
    }

    /// Node `n` runs as part of a group another node leads (the executor skips it).
    pub(super) fn follows(&self, n: usize) -> bool {
        self.group_of.get(n).and_then(|&g| self.groups.get(g as usize)).is_some_and(|g| g.nodes()[0] != n)
    }

    /// There are groups.
    pub(super) fn any(&self) -> bool {
        !self.groups.is_empty()
    }

    /// The unit node `n` runs in: its group's leader, or `n` itself.
    pub(super) fn unit(&self, n: usize) -> usize {
        match self.group_of.get(n).and_then(|&g| self.groups.get(g as usize)) {
            Some(g) => g.nodes()[0],
            None => n,
        }
    }

    /// `producers` (per node index, the nodes it reads from) contracted to units: a leader's list
    /// holds the units any member reads from outside its group, a follower's is empty. Without
    /// groups, `producers` as they are. The order a pipelined graph runs in (`run_order.rs`) and
    /// its frame slots' dependencies (`frames.rs`) are over units: a group runs as one job.
    pub(super) fn unit_producers(&self, producers: &[Vec<usize>]) -> Vec<Vec<usize>> {
        if !self.any() {
            return producers.to_vec();
        }
        let mut out = vec![Vec::new(); producers.len()];
        for (n, ps) in producers.iter().enumerate() {
            let u = self.unit(n);
            for &p in ps {
                let pu = self.unit(p);
                if pu != u && !out[u].contains(&pu) {
                    out[u].push(pu);
                }
            }
        }
        out
    }
}
