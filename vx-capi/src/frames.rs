//! Callback frames: while a C validator, init, deinit or process callback runs, the thread keeps
//! a frame saying which node it runs for and what the runtime lent it (the validate, lifecycle or
//! process context; the meta formats; the patches the callback mapped). Calls the callback makes
//! on its own node, parameters, meta formats and images are answered from the frame: the graph
//! is busy (verifying or running) and its node state is not reachable through the graph then.
//!
//! Concurrency: frames are thread-local; only the thread running a callback sees its frame, and
//! the runtime does not touch the context it lent while the callback runs, so the frame's
//! exclusive pointer is the only access to it for the callback's duration.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

use vx::{Kernel, LifecycleContext, MetaFormats, NodeKey, ProcessContext, Reference, ValidateContext, WeakKernel};

use crate::ffi::{put, take};
use crate::sys::consts::*;
use crate::sys::*;

/// What the runtime lent the callback.
pub(crate) enum Lent {
    Validate { vc: *const ValidateContext<'static>, metas: *mut MetaFormats },
    Lifecycle(*mut LifecycleContext<'static>),
    Process(*mut ProcessContext<'static>),
}

struct Frame {
    id: u64,
    key: NodeKey,
    kernel: WeakKernel,
    lent: Lent,
    /// What the callback mapped (map id → mapping: an `ImageBytesMap` or a `vx::BytesMap`);
    /// unmapped when the frame ends.
    maps: Vec<(usize, Box<dyn Send>)>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Run `f` with a frame for node `key` lending `lent`; returns `f`'s result and the frame id it
/// ran under (meta-format handles name it). Whatever the callback left mapped is unmapped.
pub(crate) fn with_frame<R>(key: NodeKey, kernel: WeakKernel, lent: Lent, f: impl FnOnce(u64) -> R) -> R {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    FRAMES.with(|fr| fr.borrow_mut().push(Frame { id, key, kernel, lent, maps: Vec::new() }));
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            let frame = FRAMES.with(|fr| fr.borrow_mut().pop());
            drop(frame); // its maps release their leases here
        }
    }
    let _pop = Pop;
    f(id)
}

fn with_node<R>(key: NodeKey, f: impl FnOnce(&mut Frame) -> R) -> Option<R> {
    FRAMES.with(|fr| fr.borrow_mut().iter_mut().rev().find(|x| x.key == key).map(f))
}

/// The kernel of the node whose callback runs here.
pub(crate) fn node_kernel(key: NodeKey) -> Option<Kernel> {
    with_node(key, |f| f.kernel.upgrade()).flatten()
}

fn params_of(lent: &Lent) -> &[Option<Reference>] {
    // SAFETY: the frame's pointers are valid for the callback's duration (module doc), and only
    // shared access is made here.
    unsafe {
        match lent {
            Lent::Validate { vc, .. } => (**vc).params(),
            Lent::Lifecycle(lc) => (**lc).params(),
            Lent::Process(pc) => (**pc).params(),
        }
    }
}

/// Parameter `index` of the node whose callback runs here (`None`: no frame for it).
pub(crate) fn node_param(key: NodeKey, index: u32) -> Option<Option<Reference>> {
    with_node(key, |f| params_of(&f.lent).get(index as usize).cloned().flatten())
}

fn border_of(lent: &Lent) -> vx::BorderMode {
    // SAFETY: as in `params_of`.
    unsafe {
        match lent {
            Lent::Validate { vc, .. } => (**vc).border(),
            Lent::Lifecycle(lc) => (**lc).border(),
            Lent::Process(pc) => (**pc).border(),
        }
    }
}

/// `vxQueryNode` on the node whose callback runs here (`None`: no frame for it).
pub(crate) fn query_node(key: NodeKey, attribute: vx_enum, ptr: *mut c_void, size: vx_size) -> Option<vx_status> {
    with_node(key, |f| {
        let (local_size, local_ptr) = match &f.lent {
            // SAFETY: as in `params_of`.
            Lent::Lifecycle(lc) => unsafe { ((**lc).local_data_size(), (**lc).local_data_ptr()) },
            // SAFETY: as in `params_of`.
            Lent::Process(pc) => unsafe { ((**pc).local_data_size(), (**pc).local_data_ptr()) },
            Lent::Validate { .. } => (0, std::ptr::null_mut()),
        };
        // SAFETY: for every `put` below, the caller's buffer contract, forwarded by vxQueryNode.
        unsafe {
            match attribute {
                VX_NODE_BORDER => put(ptr, size, crate::graph::border_t_of(border_of(&f.lent))),
                VX_NODE_LOCAL_DATA_SIZE => put(ptr, size, local_size),
                VX_NODE_LOCAL_DATA_PTR => put(ptr, size, local_ptr),
                VX_NODE_PARAMETERS => put(ptr, size, params_of(&f.lent).len() as vx_uint32),
                VX_NODE_STATUS => put(ptr, size, VX_SUCCESS),
                VX_NODE_IS_REPLICATED | VX_NODE_VALID_RECT_RESET => put(ptr, size, VX_FALSE),
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// `vxSetNodeAttribute` on the node whose callback runs here (`None`: no frame for it).
pub(crate) fn set_node(key: NodeKey, attribute: vx_enum, ptr: *const c_void, size: vx_size) -> Option<vx_status> {
    with_node(key, |f| {
        let Lent::Lifecycle(lc) = f.lent else {
            // The spec: local data is set in init (or before verify); nothing else while a
            // callback runs.
            return VX_ERROR_NOT_SUPPORTED;
        };
        // SAFETY: the frame's exclusive pointer (module doc); no other reference to the context
        // is live while the callback runs.
        let lc = unsafe { &mut *lc };
        let r = |res: vx::Result<()>| res.map_or_else(|e| e.status().code(), |()| VX_SUCCESS);
        // SAFETY: for every `take` below, the caller's buffer contract, forwarded by vxSetNodeAttribute.
        unsafe {
            match attribute {
                VX_NODE_LOCAL_DATA_SIZE => {
                    take::<vx_size>(ptr, size).map_or_else(|s| s, |n| r(lc.set_local_data_size(n)))
                }
                VX_NODE_LOCAL_DATA_PTR => {
                    take::<*mut c_void>(ptr, size).map_or_else(|s| s, |p| r(lc.set_local_data_ptr(p)))
                }
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// The node of frame `id`, if it is still running on this thread.
pub(crate) fn frame_node(id: u64) -> Option<NodeKey> {
    FRAMES.with(|fr| fr.borrow().iter().rev().find(|x| x.id == id).map(|x| x.key))
}

/// Run `f` on the meta formats of frame `id` (`None`: that validator has returned).
pub(crate) fn with_metas<R>(id: u64, f: impl FnOnce(&mut MetaFormats) -> R) -> Option<R> {
    FRAMES.with(|fr| {
        let mut fr = fr.borrow_mut();
        let frame = fr.iter_mut().rev().find(|x| x.id == id)?;
        match frame.lent {
            // SAFETY: the frame's exclusive pointer (module doc).
            Lent::Validate { metas, .. } => Some(f(unsafe { &mut *metas })),
            _ => None,
        }
    })
}

/// Map `rect` of `plane` of `image` as a kernel of the process callback running here, if
/// `image` is one of its parameters: the mapping's pointer and addressing, kept under `map_id`
/// until [`unmap`] or the end of the callback.
pub(crate) fn map_for_kernel(
    image: &Reference,
    rect: vx::Rect,
    plane: usize,
    write: bool,
    map_id: usize,
) -> Option<vx::Result<(*mut u8, vx::PatchAddressing)>> {
    FRAMES.with(|fr| {
        let mut fr = fr.borrow_mut();
        let frame = fr.last_mut()?;
        let Lent::Process(pc) = frame.lent else { return None };
        // SAFETY: as in `params_of`.
        let pc = unsafe { &*pc };
        let i = pc.params().iter().position(|p| p.as_ref().is_some_and(|p| p.same_object(image)))?;
        Some(pc.image(i as u32).and_then(|view| view.map_bytes(rect, plane, write)).map(|m| {
            let out = (m.ptr(), m.addressing());
            frame.maps.push((map_id, Box::new(m)));
            out
        }))
    })
}

/// Run `f` with the process context of the callback running here and the index of `object`
/// among its parameters, if `object` is one: the kernel's access to its own parameters (virtual
/// ones included), for the functions of `objects.rs`.
pub(crate) fn kernel_param<R>(object: &Reference, f: impl FnOnce(&ProcessContext<'static>, u32) -> R) -> Option<R> {
    let (pc, index) = FRAMES.with(|fr| {
        let fr = fr.borrow();
        let Lent::Process(pc) = fr.last()?.lent else { return None };
        // SAFETY: as in `params_of`.
        let params = unsafe { (*pc).params() };
        let i = params.iter().position(|p| p.as_ref().is_some_and(|p| p.same_object(object)))?;
        Some((pc, i as u32))
    })?;
    // SAFETY: as in `params_of`: the context outlives the callback this call is part of; the
    // borrow of the frames ended above, so `f` may use them.
    Some(f(unsafe { &*pc }, index))
}

/// Keep `map` under `map_id` in the frame of the process callback running here until [`unmap`]
/// or the end of the callback; gives it back when no process callback runs here.
pub(crate) fn keep(map_id: usize, map: vx::BytesMap) -> Result<(), vx::BytesMap> {
    FRAMES.with(|fr| match fr.borrow_mut().last_mut() {
        Some(frame) if matches!(frame.lent, Lent::Process(_)) => {
            frame.maps.push((map_id, Box::new(map)));
            Ok(())
        }
        _ => Err(map),
    })
}

/// Unmap `map_id` if a callback running here mapped it (true if it did).
pub(crate) fn unmap(map_id: usize) -> bool {
    FRAMES.with(|fr| {
        let mut fr = fr.borrow_mut();
        for frame in fr.iter_mut().rev() {
            if let Some(i) = frame.maps.iter().position(|(id, _)| *id == map_id) {
                frame.maps.swap_remove(i);
                return true;
            }
        }
        false
    })
}
