//! What fusion did to a graph, for the application ([`Graph::fusion_report`]): each fused group
//! (its nodes, the images that live in its line buffers, the rows per step, the line-buffer bytes)
//! and, for every tiling node left unfused, why ([`FusionRefusal`]). A leaf: plain data.

use std::fmt;

use crate::error::Result;
use crate::graph::Graph;

/// Why a tiling node runs unfused (`docs/design/fusion.md` §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FusionRefusal {
    /// Fusion is off for the graph (`ContextBuilder::fusion`, `Graph::set_fusion`).
    FusionOff,
    /// The kernel declared no fusion support (hand-written against the raw ABI, an older SDK, or
    /// `#[tiling_kernel(fusion = false)]`).
    NoFusionSupport,
    /// The kernel reads rows above or below its output through tile descriptors (no row entry):
    /// a line buffer is not linearly addressable.
    VerticalNeighbourhoodWithoutRowEntry,
    /// The node's neighbourhood was overridden (`Node::set_neighborhood`) away from the row
    /// entry's.
    NeighbourhoodOverridden,
    /// The node has a completion callback (it may abandon the graph after this node alone).
    HasCallback,
    /// The node takes commands (its kernel has a control callback): a command waits for the
    /// node's own run, which inside a group would be the whole group's.
    TakesCommands,
    /// No image joins the node to another fusable node on its own target, and one that would
    /// have joined it is read on another target than its writer's (a group runs on one target:
    /// its members share one executor).
    AcrossTargets,
    /// The node aliases an input with an output (buffer aliasing).
    Aliased,
    /// The kernel asks for tile memory.
    TileMemory,
    /// No image joins the node to another fusable node: every image it writes is real, a graph
    /// parameter, read by a node that cannot fuse, or read in part (an ROI).
    NothingToFuseWith,
    /// The group would not be convex: a path leaves it and comes back.
    WouldNotBeConvex,
    /// An image between two members of the group is read in part (an ROI, or an image overlapping
    /// it), or it is real or read outside the group (materialized) and its writer would then keep
    /// the group from sharing its rows between threads.
    MaterializedInsideGroup,
    /// The group touches more outside images than one run can map at once.
    TooManyImages,
    /// With the other groups formed, the group would have to run both before and after another
    /// one (a path from it into the other group and one back): contracted, the graph would have a
    /// cycle.
    GroupCycle,
    /// The members' block heights have a least common multiple above 2³⁰ rows: a group's steps
    /// and bands are multiples of it.
    BlockHeights,
}

impl fmt::Display for FusionRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FusionRefusal::FusionOff => "fusion is off for this graph",
            FusionRefusal::NoFusionSupport => "the kernel declared no fusion support",
            FusionRefusal::VerticalNeighbourhoodWithoutRowEntry => {
                "the kernel reads rows above or below through tile descriptors and has no row entry"
            }
            FusionRefusal::NeighbourhoodOverridden => "the node's neighbourhood differs from the kernel's",
            FusionRefusal::HasCallback => "the node has a completion callback",
            FusionRefusal::TakesCommands => "the node takes commands (a control callback)",
            FusionRefusal::AcrossTargets => {
                "an image that would join it to other fusable nodes is read on another target than its writer's"
            }
            FusionRefusal::Aliased => "the node aliases an input with an output",
            FusionRefusal::TileMemory => "the kernel asks for tile memory",
            FusionRefusal::NothingToFuseWith => {
                "no virtual image joins it to another fusable node (each is real, a graph parameter, or read by a node that cannot fuse)"
            }
            FusionRefusal::WouldNotBeConvex => "the group would not be convex (a path leaves it and comes back)",
            FusionRefusal::MaterializedInsideGroup => {
                "an image between members is read in part, or is kept whole (real or read outside the group) where that would keep the group on one thread"
            }
            FusionRefusal::TooManyImages => "the group would touch too many outside images",
            FusionRefusal::GroupCycle => {
                "the group would have to run both before and after another group (a cycle between groups)"
            }
            FusionRefusal::BlockHeights => {
                "the group's block heights have a least common multiple above 2^30 rows (steps are multiples of it)"
            }
        })
    }
}

/// One fused group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FusedGroupReport {
    /// Its nodes, in the order each step runs them.
    pub nodes: Vec<String>,
    /// The virtual images that live only in its line buffers (they take no image buffer).
    pub fused_images: Vec<String>,
    /// Images between members that keep their buffer (real, or read outside the group): members
    /// read their rows as they are written, while in the cache.
    pub materialized_images: Vec<String>,
    /// Rows of the group's image per band (one band: the whole height).
    pub band_rows: u32,
    /// The last nodes' rows per step (`k`).
    pub rows_per_step: u32,
    /// Bytes of line buffers (rings) the group holds, per executing thread.
    pub line_buffer_bytes_per_thread: usize,
    /// Threads that may share a run, each taking bands (1: the group never splits).
    pub threads: usize,
}

/// A tiling node left unfused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnfusedNode {
    /// The node's name.
    pub node: String,
    /// Its kernel's name.
    pub kernel: String,
    /// Why.
    pub reason: FusionRefusal,
}

impl fmt::Display for UnfusedNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.node, self.kernel, self.reason)
    }
}

/// What fusion did at the graph's last verification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FusionReport {
    /// Fusion was on for the graph.
    pub enabled: bool,
    /// The fused groups.
    pub groups: Vec<FusedGroupReport>,
    /// Every tiling node not in a group, with the reason.
    pub unfused: Vec<UnfusedNode>,
}

impl fmt::Display for FusionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.enabled {
            return writeln!(f, "fusion: off");
        }
        writeln!(f, "fusion: {} group(s)", self.groups.len())?;
        for (i, g) in self.groups.iter().enumerate() {
            write!(f, "  g{i}: {} | fused images: {}", g.nodes.join(" -> "), g.fused_images.join(", "))?;
            if !g.materialized_images.is_empty() {
                write!(f, " | materialized: {}", g.materialized_images.join(", "))?;
            }
            writeln!(f, " | {} rows/step | line buffers {} B/thread", g.rows_per_step, g.line_buffer_bytes_per_thread)?;
        }
        for u in &self.unfused {
            writeln!(f, "  unfused {u}")?;
        }
        Ok(())
    }
}

impl Graph {
    /// What fusion did at the last verification (`docs/book/src/fusion.md`): the fused groups and, for each
    /// tiling node left unfused, why. Before the first verification: empty, `enabled` false.
    pub fn fusion_report(&self) -> Result<FusionReport> {
        Ok(self.inner.lock()?.fusion.report.clone())
    }

    /// Fuse this graph's tiling nodes or not: `Some` overrides the context's setting
    /// ([`ContextBuilder::fusion`](crate::ContextBuilder::fusion)), `None` follows it. A change
    /// takes effect at the next verification (the graph is re-verified at its next run).
    pub fn set_fusion(&self, on: Option<bool>) -> Result<()> {
        let mut body = self.inner.lock()?;
        if body.fusion_override != on {
            body.fusion_override = on;
            body.invalidate();
        }
        Ok(())
    }
}
