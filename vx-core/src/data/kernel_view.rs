//! [`KernelView`]: a data object as a kernel of its graph sees it while running. A leaf: each
//! object's file adds the kernel-side methods of its type (copy and map, virtual objects included).

use std::ops::Deref;

/// A data object as a kernel of its graph sees it while running: it may copy and map the object
/// even when it is virtual (the application may not). Attributes through `Deref`.
pub struct KernelView<'a, T> {
    pub(super) object: &'a T,
}

impl<T> Clone for KernelView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for KernelView<'_, T> {}

impl<'a, T> KernelView<'a, T> {
    pub(crate) fn new(object: &'a T) -> KernelView<'a, T> {
        KernelView { object }
    }
    /// The object handle (attributes; application-side access).
    pub fn object(&self) -> &'a T {
        self.object
    }
}

impl<T> Deref for KernelView<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.object
    }
}
