//! Who runs which kernel: one [`KernelUse`] per node, registered in its context's kernel table, so a
//! module reload can name the graphs and nodes that a kernel it drops would leave on old code —
//! without taking any graph's lock (a graph may be processing for a long time).
//!
//! Registration happens under the read side of the table's swap lock (`add_node`, a rebind), the
//! reload's look under the write side: a node is either registered before the reload looks, or
//! created after it and then resolves the kernel as it is after the reload.

use std::sync::{Arc, Mutex, Weak};

use crate::kernel::record::KernelInner;
use crate::support::sync::lock;

/// A node running a kernel version its module no longer publishes: the module was reloaded with a
/// version that dropped or renamed the kernel (a forced reload), or unloaded. The node keeps the
/// old code (its library stays mapped) until it is removed or its graph released.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StaleNode {
    /// The graph's name.
    pub graph: String,
    /// The node's name.
    pub node: String,
    /// The kernel's name.
    pub kernel: String,
    /// The module the node's kernel version comes from (`None`: not from a module).
    pub module: Option<String>,
    /// That module's version (`None`: not from a module).
    pub version: Option<String>,
}

/// What a reload asks of the graph a use belongs to, once its new versions are published: move
/// the nodes that can move in place now, if the graph is idle (implemented by the graph; named here
/// so this layer never names a graph).
pub(crate) trait IdleRebind: Send + Sync {
    /// Never blocks: a graph that is running (or locked by anyone) rebinds at its next run.
    fn rebind_if_idle(&self);
}

/// One node's use of one kernel version; the node owns it, the table holds it weakly.
pub(crate) struct KernelUse {
    /// The version the node runs (a rebind replaces it in place, under the table's read side).
    kernel: Mutex<Arc<KernelInner>>,
    /// The graph's name (shared with the graph: a rename shows).
    graph: Arc<Mutex<String>>,
    /// The node's name (kept up to date by `Node::set_name`).
    node: Mutex<String>,
    /// The node's graph.
    owner: Weak<dyn IdleRebind>,
}

impl KernelUse {
    /// The version the node runs.
    pub(crate) fn kernel(&self) -> Arc<KernelInner> {
        Arc::clone(&lock(&self.kernel))
    }

    /// The node now runs `next` (a rebind, under the table's read side, so a reload's look sees
    /// the node on one version or the other, never on none).
    pub(crate) fn rebind(&self, next: Arc<KernelInner>) {
        *lock(&self.kernel) = next;
    }

    pub(crate) fn set_node_name(&self, name: &str) {
        *lock(&self.node) = name.to_owned();
    }

    /// (graph name, node name).
    pub(crate) fn names(&self) -> (String, String) {
        (lock(&self.graph).clone(), lock(&self.node).clone())
    }
}

/// The graphs of `uses` with a node whose kernel version was replaced (each once).
pub(super) fn graphs_on_replaced(uses: &[Arc<KernelUse>]) -> Vec<Arc<dyn IdleRebind>> {
    let mut graphs: Vec<Arc<dyn IdleRebind>> = Vec::new();
    for u in uses {
        if !lock(&u.kernel).replaced.load(std::sync::atomic::Ordering::Acquire) {
            continue;
        }
        let Some(g) = u.owner.upgrade() else { continue };
        // A graph's uses are mostly registered together: compare with the last ones first.
        if !graphs.iter().rev().any(|x| std::ptr::addr_eq(Arc::as_ptr(x), Arc::as_ptr(&g))) {
            graphs.push(g);
        }
    }
    graphs
}

/// The uses of a context's kernels (weak: a dropped node's entry is dead, pruned as uses come).
#[derive(Default)]
pub(super) struct KernelUses {
    uses: Vec<Weak<KernelUse>>,
    /// Live entries at the last prune: the next prune comes when the list doubles.
    live_at_prune: usize,
}

impl KernelUses {
    /// Register a node `node` of graph `graph` running `kernel`; the node keeps the returned use.
    pub(super) fn register(
        &mut self,
        kernel: &Arc<KernelInner>,
        graph: &Arc<Mutex<String>>,
        node: &str,
        owner: Weak<dyn IdleRebind>,
    ) -> Arc<KernelUse> {
        if self.uses.len() >= 2 * self.live_at_prune + 16 {
            self.uses.retain(|u| u.strong_count() > 0);
            self.live_at_prune = self.uses.len();
        }
        let u = Arc::new(KernelUse {
            kernel: Mutex::new(Arc::clone(kernel)),
            graph: Arc::clone(graph),
            node: Mutex::new(node.to_owned()),
            owner,
        });
        self.uses.push(Arc::downgrade(&u));
        u
    }

    /// Every live use (upgraded: the caller filters and drops them after releasing this lock, as
    /// the last handle of a use may go with them).
    pub(super) fn live(&self) -> Vec<Arc<KernelUse>> {
        self.uses.iter().filter_map(Weak::upgrade).collect()
    }
}
