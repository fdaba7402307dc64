//! Resource accounting: how many kernels, modules, graphs, nodes and data objects a context holds,
//! their peaks, the configured maxima, and the bytes of data buffers allocated (TIOVX-style
//! "current / peak / configured maximum" statistics).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, ErrorKind, Result};

/// The kinds of counted resources.
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
}

impl ResourceKind {
    pub(crate) const ALL: [ResourceKind; 5] = [
        ResourceKind::Kernels,
        ResourceKind::Modules,
        ResourceKind::Graphs,
        ResourceKind::Nodes,
        ResourceKind::DataObjects,
    ];

    fn index(self) -> usize {
        self as usize
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
        })
    }
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
    fn add(&self, n: usize) -> usize {
        let now = self.current.fetch_add(n, Ordering::AcqRel) + n;
        self.peak.fetch_max(now, Ordering::AcqRel);
        now
    }
    fn sub(&self, n: usize) {
        self.current.fetch_sub(n, Ordering::AcqRel);
    }
    fn usage(&self, max: usize) -> ResourceUsage {
        ResourceUsage { current: self.current.load(Ordering::Acquire), peak: self.peak.load(Ordering::Acquire), max }
    }
}

/// Counters shared by a context and everything it created.
pub(crate) struct Resources {
    maxima: [usize; 5],
    counters: [Counter; 5],
    bytes: Counter,
}

impl Resources {
    pub(crate) fn new(maxima: [usize; 5]) -> Arc<Resources> {
        Arc::new(Resources { maxima, counters: Default::default(), bytes: Counter::default() })
    }

    /// Take one unit of `kind`, refusing past the configured maximum.
    pub(crate) fn acquire(self: &Arc<Self>, kind: ResourceKind) -> Result<ResourceSlot> {
        let c = &self.counters[kind.index()];
        let max = self.maxima[kind.index()];
        let mut cur = c.current.load(Ordering::Acquire);
        loop {
            if cur >= max {
                return Err(Error::new(
                    ErrorKind::NoResources,
                    format!("the context's limit of {max} {kind} is reached"),
                ));
            }
            match c.current.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        c.peak.fetch_max(cur + 1, Ordering::AcqRel);
        Ok(ResourceSlot { resources: Arc::clone(self), kind })
    }

    pub(crate) fn usage(&self, kind: ResourceKind) -> ResourceUsage {
        self.counters[kind.index()].usage(self.maxima[kind.index()])
    }

    pub(crate) fn add_bytes(&self, n: usize) {
        self.bytes.add(n);
    }

    pub(crate) fn sub_bytes(&self, n: usize) {
        self.bytes.sub(n);
    }

    pub(crate) fn bytes(&self) -> ResourceUsage {
        self.bytes.usage(usize::MAX)
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
