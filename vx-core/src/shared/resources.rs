//! Resource accounting: how many kernels, modules, graphs, nodes and data objects a context holds,
//! their peaks, the configured maxima, and the bytes of data buffers allocated (TIOVX-style
//! "current / peak / configured maximum" statistics).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, ErrorKind, Result};

/// The kinds of counted resources: objects (one unit each) and bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// Kernels added and not removed.
    Kernels,
    /// Loaded modules.
    Modules,
    /// Live graphs.
    Graphs,
    /// Live nodes over all graphs.
    Nodes,
    /// Live data objects (images, scalars, arrays, user data objects).
    DataObjects,
    /// Bytes of data buffers (objects' buffers, memory-plan arenas, tile memory, local data).
    BufferBytes,
    /// Bytes of kernels' persistent memory (allocated in init, freed in deinit).
    PersistentBytes,
    /// Bytes of scratch arenas (one per executor of each graph, sized at verify).
    ScratchBytes,
}

impl ResourceKind {
    /// Every kind, in report order.
    pub const ALL: [ResourceKind; 8] = [
        ResourceKind::Kernels,
        ResourceKind::Modules,
        ResourceKind::Graphs,
        ResourceKind::Nodes,
        ResourceKind::DataObjects,
        ResourceKind::BufferBytes,
        ResourceKind::PersistentBytes,
        ResourceKind::ScratchBytes,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The key of this limit in [`ContextConfig`](crate::ContextConfig) and in a limits file.
    pub fn config_key(self) -> &'static str {
        match self {
            ResourceKind::Kernels => "max_kernels",
            ResourceKind::Modules => "max_modules",
            ResourceKind::Graphs => "max_graphs",
            ResourceKind::Nodes => "max_nodes",
            ResourceKind::DataObjects => "max_data_objects",
            ResourceKind::BufferBytes => "max_buffer_bytes",
            ResourceKind::PersistentBytes => "max_persistent_bytes",
            ResourceKind::ScratchBytes => "max_scratch_bytes",
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` (not `write_str`) so width and alignment flags apply.
        f.pad(match self {
            ResourceKind::Kernels => "kernels",
            ResourceKind::Modules => "modules",
            ResourceKind::Graphs => "graphs",
            ResourceKind::Nodes => "nodes",
            ResourceKind::DataObjects => "data objects",
            ResourceKind::BufferBytes => "buffer bytes",
            ResourceKind::PersistentBytes => "persistent bytes",
            ResourceKind::ScratchBytes => "scratch bytes",
        })
    }
}

/// A persistent-memory leak: blocks a node's deinit did not free (the runtime freed them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLeak {
    /// The node.
    pub node: String,
    /// Its kernel.
    pub kernel: String,
    /// Blocks left.
    pub blocks: usize,
    /// Their bytes.
    pub bytes: usize,
}

/// A snapshot of one resource's usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceUsage {
    /// In use now.
    pub current: usize,
    /// The most ever in use at once.
    pub peak: usize,
    /// The configured maximum.
    pub max: usize,
}

#[derive(Default)]
struct Counter {
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl Counter {
    fn sub(&self, n: usize) {
        self.current.fetch_sub(n, Ordering::AcqRel);
    }
    fn usage(&self, max: usize) -> ResourceUsage {
        ResourceUsage { current: self.current.load(Ordering::Acquire), peak: self.peak.load(Ordering::Acquire), max }
    }
}

/// Counters shared by a context and everything it created.
pub(crate) struct Resources {
    maxima: [usize; 8],
    counters: [Counter; 8],
}

impl Resources {
    pub(super) fn new(maxima: [usize; 8]) -> Arc<Resources> {
        Arc::new(Resources { maxima, counters: Default::default() })
    }

    /// Take `n` units of `kind`, refusing past the configured maximum (nothing taken then).
    fn take(&self, kind: ResourceKind, n: usize) -> Result<()> {
        let c = &self.counters[kind.index()];
        let max = self.maxima[kind.index()];
        let mut cur = c.current.load(Ordering::Acquire);
        loop {
            if cur.checked_add(n).is_none_or(|after| after > max) {
                return Err(Error::new(
                    ErrorKind::NoResources,
                    format!(
                        "the context's limit of {max} {kind} is reached (raise `{}` in the ContextConfig or the \
                         limits file)",
                        kind.config_key()
                    ),
                )
                .expected_found(format!("at most {max} {kind}"), format!("{cur} in use + {n}")));
            }
            match c.current.compare_exchange_weak(cur, cur + n, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        c.peak.fetch_max(cur + n, Ordering::AcqRel);
        Ok(())
    }

    /// Take one unit of `kind`, refusing past the configured maximum.
    pub(super) fn acquire(self: &Arc<Self>, kind: ResourceKind) -> Result<ResourceSlot> {
        self.take(kind, 1)?;
        Ok(ResourceSlot { resources: Arc::clone(self), kind })
    }

    pub(crate) fn usage(&self, kind: ResourceKind) -> ResourceUsage {
        self.counters[kind.index()].usage(self.maxima[kind.index()])
    }

    /// Account `n` bytes of `kind` (a byte kind), refusing past its limit.
    pub(crate) fn add_bytes(&self, kind: ResourceKind, n: usize) -> Result<()> {
        self.take(kind, n)
    }

    pub(crate) fn sub_bytes(&self, kind: ResourceKind, n: usize) {
        self.counters[kind.index()].sub(n);
    }
}

/// One unit of a counted resource, given back when dropped.
pub(crate) struct ResourceSlot {
    resources: Arc<Resources>,
    kind: ResourceKind,
}

impl Drop for ResourceSlot {
    fn drop(&mut self) {
        self.resources.counters[self.kind.index()].sub(1);
    }
}
