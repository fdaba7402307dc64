//! Nodes (`vx_node`): a handle to one kernel instance in a graph, with its attributes: parameters
//! (replaceable by index), border, local data, status and execution time.

use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, MutexGuard, Weak};
use std::time::Duration;

use vx_plugin_abi::{BorderMode, Neighborhood, Status};

use crate::data::reference::Reference;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{GraphBody, GraphInner, NodeSlot};
pub use crate::kernel::contexts::NodeKey;

/// `VX_NODE_PERFORMANCE` / `VX_GRAPH_PERFORMANCE`: execution time statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Perf {
    /// Completed executions.
    pub num: u64,
    /// Duration of the last execution.
    pub last: Duration,
    /// Sum of all executions.
    pub sum: Duration,
    /// Shortest execution.
    pub min: Duration,
    /// Longest execution.
    pub max: Duration,
}

impl Perf {
    pub(super) fn record(&mut self, d: Duration) {
        self.min = if self.num == 0 { d } else { self.min.min(d) };
        self.max = self.max.max(d);
        self.num += 1;
        self.last = d;
        self.sum = self.sum.saturating_add(d);
    }

    /// Mean execution time (zero before the first; exact past 2³² executions too).
    pub fn avg(&self) -> Duration {
        match self.num {
            0 => Duration::ZERO,
            n => Duration::from_nanos((self.sum.as_nanos() / n as u128).min(u64::MAX as u128) as u64),
        }
    }
}

/// A node handle. It does not keep the graph alive: after the graph is dropped, operations fail with
/// `VX_ERROR_INVALID_REFERENCE`.
#[derive(Clone)]
pub struct Node {
    pub(super) graph: Weak<GraphInner>,
    pub(super) index: usize,
    /// The graph's id (the node's key stays right while its graph is being dropped).
    pub(super) graph_id: u64,
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Node(#{})", self.index)
    }
}

impl Node {
    pub(super) fn with<R>(&self, f: impl FnOnce(&GraphInner, &mut GraphBody, usize) -> Result<R>) -> Result<R> {
        let g = self
            .graph
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the node's graph was released"))?;
        let mut body: MutexGuard<'_, GraphBody> = g.lock()?;
        if !matches!(body.nodes.get(self.index), Some(Some(_))) {
            return Err(
                Error::new(ErrorKind::InvalidReference, "the node was removed from its graph").in_graph(&g.name())
            );
        }
        f(&g, &mut body, self.index)
    }

    fn read<R>(&self, f: impl FnOnce(&NodeSlot) -> R) -> Result<R> {
        self.with(|_, body, i| Ok(f(body.nodes[i].as_ref().expect("checked"))))
    }

    /// The node's identity (its graph's id and its index).
    pub fn key(&self) -> NodeKey {
        NodeKey { graph: self.graph_id, index: self.index }
    }
    /// The graph the node is in, while it lives.
    pub fn graph(&self) -> Option<crate::graph::Graph> {
        self.graph.upgrade().map(|inner| crate::graph::Graph { inner })
    }
    /// The node's kernel (the version it is bound to now).
    pub fn kernel(&self) -> Result<crate::kernel::handle::Kernel> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_ref().expect("checked");
            Ok(crate::kernel::handle::Kernel { inner: Arc::clone(&s.kernel), table: Arc::clone(&g.ctx.inner.kernels) })
        })
    }
    /// `VX_NODE_PARAMETERS`: the number of parameters of the node's kernel.
    pub fn num_parameters(&self) -> Result<u32> {
        self.read(|s| s.params.len() as u32)
    }
    /// The node's name (default `<kernel short name>#<index>`).
    pub fn name(&self) -> Result<String> {
        self.read(|s| s.name.clone())
    }
    /// Rename the node.
    pub fn set_name(&self, name: &str) -> Result<()> {
        self.with(|_, body, i| {
            let s = body.nodes[i].as_mut().expect("checked");
            s.name = name.to_owned();
            s.user.set_node_name(name);
            Ok(())
        })
    }
    /// The kernel's name.
    pub fn kernel_name(&self) -> Result<String> {
        self.read(|s| s.kernel.name.clone())
    }

    /// `vxGetParameterByIndex`: the object at `index` (`None` if unset).
    pub fn parameter(&self, index: u32) -> Result<Option<Reference>> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_ref().expect("checked");
            s.params.get(index as usize).cloned().ok_or_else(|| {
                Error::new(ErrorKind::InvalidParameters, "no such parameter")
                    .at_parameter(index)
                    .in_node(&s.name)
                    .in_graph(&g.name())
                    .expected_found(format!("index < {}", s.params.len()), index)
            })
        })
    }

    /// `vxSetParameterByIndex`: replace (or set, or clear with `None`) a parameter. Replacing it
    /// with an object of different meta data, or setting/clearing an optional parameter, marks the
    /// node for re-verification (the spec's triggers); any replacement makes the graph re-check its
    /// structure at the next verify or process.
    pub fn set_parameter(&self, index: u32, value: impl Into<Option<Reference>>) -> Result<()> {
        let value = value.into();
        self.with(|g, body, i| {
            let s = body.nodes[i].as_mut().expect("checked");
            let ctxt = |e: Error| e.at_parameter(index).in_node(&s.name).in_kernel(&s.kernel.name).in_graph(&g.name());
            let n = s.params.len();
            if index as usize >= n {
                return Err(ctxt(
                    Error::new(ErrorKind::InvalidParameters, "no such parameter")
                        .expected_found(format!("index < {n}"), index),
                ));
            }
            let spec = s.spec(index as usize);
            match &value {
                Some(r) => crate::graph::check_param(g, &s.kernel, index as usize, spec, r)?,
                None if spec.state == crate::data::types::ParamState::Required => {
                    return Err(ctxt(Error::new(
                        ErrorKind::InvalidParameters,
                        "a required parameter cannot be cleared",
                    )));
                }
                None => {}
            }
            let old = &s.params[index as usize];
            let trigger = match (old, &value) {
                (None, None) => false,
                (Some(a), Some(b)) => a.meta() != b.meta(),
                _ => true,
            };
            let replaced = match (old, &value) {
                (Some(a), Some(b)) if !trigger => Some((a.clone(), b.clone())),
                _ => None,
            };
            s.params[index as usize] = value;
            s.dirty |= trigger;
            // Same meta data: no trigger, and often nothing the graph passes read changed.
            let proportional = replaced
                .is_some_and(|(a, b)| crate::graph::verify::note_input_replaced(body, i, index as usize, &a, &b));
            if !proportional {
                body.invalidate();
            }
            Ok(())
        })
    }

    /// `VX_NODE_BORDER`.
    pub fn border(&self) -> Result<BorderMode> {
        self.read(|s| s.border)
    }
    /// Set `VX_NODE_BORDER`; a change marks the node for re-verification. Tiling nodes accept
    /// `Undefined` and `Self_` only.
    pub fn set_border(&self, border: BorderMode) -> Result<()> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_mut().expect("checked");
            if s.kernel.functions.is_tiling() && crate::kernel::signature::check_tiling_border(border).is_err() {
                // Say what this kernel does at the image edge, and what a node may set instead.
                let fin = s.kernel.final_();
                let declared = match fin.and_then(|f| f.fusion).and_then(|f| f.fill) {
                    Some(fill) => format!(
                        "a row kernel whose edge rule, {fill:?}, is declared in its source and applied by the SDK"
                    ),
                    None => match fin.map(|f| f.attrs.border) {
                        Some(b) => format!("a tiling kernel (declared border {b:?})"),
                        None => "a tiling kernel".to_owned(),
                    },
                };
                return Err(Error::new(
                    ErrorKind::NotSupported,
                    format!(
                        "node border {border:?} refused: the kernel is {declared}; a tiling node's border is \
                         Undefined (the image edge is left unwritten, outside the valid rectangle) or Self_ (the \
                         kernel's own edge handling, the default); Replicate and Constant are for user kernels, \
                         which read the node's border themselves"
                    ),
                )
                .expected_found("Undefined or Self_", format!("{border:?}"))
                .in_node(&s.name)
                .in_kernel(&s.kernel.name)
                .in_graph(&g.name()));
            }
            if s.border != border {
                s.border = border;
                s.dirty = true;
                body.invalidate();
            }
            Ok(())
        })
    }

    /// The node's input neighborhood (tiling nodes).
    pub fn neighborhood(&self) -> Result<Neighborhood> {
        self.read(|s| s.neighborhood)
    }
    /// Override the kernel's input neighborhood for this tiling node; a change marks the node for
    /// re-verification.
    pub fn set_neighborhood(&self, nb: Neighborhood) -> Result<()> {
        self.with(|g, body, i| {
            let s = body.nodes[i].as_mut().expect("checked");
            let ctxt = |e: Error| e.in_node(&s.name).in_kernel(&s.kernel.name).in_graph(&g.name());
            if !s.kernel.functions.is_tiling() {
                return Err(ctxt(Error::new(ErrorKind::NotSupported, "only tiling nodes have an input neighborhood")));
            }
            let nb = crate::kernel::signature::check_neighborhood(nb).map_err(ctxt)?;
            if s.neighborhood != nb {
                s.neighborhood = nb;
                s.dirty = true;
                body.invalidate();
            }
            Ok(())
        })
    }

    /// `VX_NODE_LOCAL_DATA_SIZE`.
    pub fn local_data_size(&self) -> Result<usize> {
        self.read(|s| s.run().local.size)
    }
    /// `VX_NODE_LOCAL_DATA_PTR` (null when unset).
    pub fn local_data_ptr(&self) -> Result<*mut c_void> {
        self.read(|s| s.run().local.ptr())
    }
    /// Setting `VX_NODE_LOCAL_DATA_SIZE` from the application is refused: the spec allows it only
    /// inside the kernel's init/deinit callbacks (see [`crate::LifecycleContext`]).
    pub fn set_local_data_size(&self, _size: usize) -> Result<()> {
        let name = self.name()?;
        Err(Error::new(
            ErrorKind::NotSupported,
            "VX_NODE_LOCAL_DATA_SIZE can only be set from the kernel's init or deinit callback",
        )
        .in_node(&name))
    }
    /// Setting `VX_NODE_LOCAL_DATA_PTR` from the application is refused, as for the size.
    pub fn set_local_data_ptr(&self, _ptr: *mut c_void) -> Result<()> {
        let name = self.name()?;
        Err(Error::new(
            ErrorKind::NotSupported,
            "VX_NODE_LOCAL_DATA_PTR can only be set from the kernel's init or deinit callback",
        )
        .in_node(&name))
    }

    /// `VX_NODE_STATUS`: the status of the last execution.
    /// Readable while the graph runs, from its own callbacks too.
    pub fn status(&self) -> Result<Status> {
        self.stats().map(|s| s.get().0)
    }
    /// `VX_NODE_PERFORMANCE`. Readable while the graph runs, from its own callbacks too.
    pub fn perf(&self) -> Result<Perf> {
        self.stats().map(|s| s.get().1)
    }

    /// The node's status and perf, reached without the graph's lock.
    fn stats(&self) -> Result<Arc<crate::graph::NodeStats>> {
        let g = self
            .graph
            .upgrade()
            .ok_or_else(|| Error::new(ErrorKind::InvalidReference, "the node's graph was released"))?;
        let stats = crate::support::sync::lock(&g.observed.nodes).get(self.index).cloned().flatten();
        stats.ok_or_else(|| {
            Error::new(ErrorKind::InvalidReference, "the node was removed from its graph").in_graph(&g.name())
        })
    }
    /// True when a re-verification trigger occurred since the node was last verified.
    pub fn needs_reverification(&self) -> Result<bool> {
        self.read(|s| s.dirty)
    }
}
