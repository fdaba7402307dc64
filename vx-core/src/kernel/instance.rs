//! A node's typed instance context (TIOVX's `tivxSetTargetKernelInstanceContext` /
//! `tivxGetTargetKernelInstanceContext`): any `Send` value a kernel sets in init (create), reaches
//! in process and control, and gets back — or leaves to be dropped — in deinit (delete). The value
//! lives in the node, so a target kernel's device handle never leaves the node's executor except
//! with the node.

use std::any::Any;

use crate::error::{Error, ErrorKind, Result};

/// The value (and its type's name, for errors).
#[derive(Default)]
pub(crate) struct InstanceContext(Option<(Box<dyn Any + Send>, &'static str)>);

impl InstanceContext {
    /// Set (or replace) the value.
    pub(super) fn set<S: Any + Send>(&mut self, value: S) {
        self.0 = Some((Box::new(value), std::any::type_name::<S>()));
    }

    /// The value, if it is an `S`.
    pub(super) fn get<S: Any + Send>(&mut self, node: &str) -> Result<&mut S> {
        match &mut self.0 {
            None => Err(Error::new(
                ErrorKind::NotAllocated,
                format!("node '{node}' has no instance context (set it in init with set_instance)"),
            )),
            Some((b, name)) => {
                let name = *name;
                b.downcast_mut::<S>().ok_or_else(|| {
                    Error::new(ErrorKind::InvalidType, format!("node '{node}''s instance context has another type"))
                        .expected_found(std::any::type_name::<S>(), name)
                })
            }
        }
    }

    /// Take the value out, if it is an `S` (left in place otherwise).
    pub(super) fn take<S: Any + Send>(&mut self, node: &str) -> Result<S> {
        self.get::<S>(node)?;
        let (b, _) = self.0.take().expect("checked just above");
        Ok(*b.downcast::<S>().expect("checked just above"))
    }

    /// Drop the value (after deinit, or a failed init).
    pub(crate) fn clear(&mut self) {
        self.0 = None;
    }
}
