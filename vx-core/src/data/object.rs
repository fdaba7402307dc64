//! What every data object has: a process-unique id, its context, a name, the graph that owns it
//! when virtual, and its slot in the context's resource count.

use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorKind, Result};
use crate::shared::{AsContext, ContextShared};
use crate::shared::{ResourceKind, ResourceSlot};
use crate::support::ids::next_id;
use crate::support::sync::lock;

/// Who is touching an object: the application (virtual objects refused) or a kernel of the graph
/// that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Application,
    Kernel,
}

/// What every data object has (see the module doc).
pub struct ObjectHeader {
    pub(super) id: u64,
    pub(super) ctx: Arc<ContextShared>,
    name: Mutex<String>,
    /// The graph id of a virtual object.
    pub(crate) scope: Option<u64>,
    /// The objects this one is part of, innermost first: a pyramid level's pyramid, an object
    /// array's items' array, an ROI's image (and theirs). Writing a container writes its parts.
    pub(super) ancestors: Vec<u64>,
    _slot: ResourceSlot,
}

impl ObjectHeader {
    pub(in crate::data) fn new(ctx: &impl AsContext, prefix: &str, scope: Option<u64>) -> Result<ObjectHeader> {
        let ctx = ctx.as_context();
        let slot = ctx.acquire(ResourceKind::DataObjects)?;
        let id = next_id();
        Ok(ObjectHeader {
            id,
            ctx: Arc::clone(ctx),
            name: Mutex::new(format!("{prefix}#{id}")),
            scope,
            ancestors: Vec::new(),
            _slot: slot,
        })
    }

    /// The header of a part of `container` (same context and scope; named after the container).
    pub(super) fn part_of(container: &ObjectHeader, prefix: &str, index: usize) -> Result<ObjectHeader> {
        let mut h = ObjectHeader::new(&container.ctx, prefix, container.scope)?;
        h.ancestors.push(container.id);
        h.ancestors.extend_from_slice(&container.ancestors);
        h.set_name(&format!("{}[{index}]", container.name()));
        Ok(h)
    }

    /// The header of the copy a pipelined graph gives frame slot `slot` of the virtual object
    /// `original` (same context and scope; named `<original>@slot<slot>`).
    pub(super) fn frame_copy_of(original: &ObjectHeader, slot: usize) -> Result<ObjectHeader> {
        let h = ObjectHeader::new(&original.ctx, "virtual-copy", original.scope)?;
        h.set_name(&format!("{}@slot{slot}", original.name()));
        Ok(h)
    }

    /// True when this object is `other` or a part of it (or the other way round).
    pub(super) fn contains_or_within(&self, other: &ObjectHeader) -> bool {
        self.id == other.id || self.ancestors.contains(&other.id) || other.ancestors.contains(&self.id)
    }

    pub(super) fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub(super) fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }

    /// Refuse application access to a virtual object.
    pub(super) fn check_access(&self, access: Access) -> Result<()> {
        if self.scope.is_some() && access == Access::Application {
            return Err(Error::new(
                ErrorKind::OptimizedAway,
                "a virtual object cannot be accessed by the application, only by the kernels of its graph",
            )
            .on_object(&self.name()));
        }
        Ok(())
    }
}
