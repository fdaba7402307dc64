//! Callback frames: while a C validator, init, deinit or process callback runs, the thread keeps
//! a frame saying which node it runs for and what the runtime lent it (the validate, lifecycle or
//! process context; the meta formats; the patches the callback mapped). Calls the callback makes
//! on its own node, parameters, meta formats and images are answered from the frame: the graph
//! is busy (verifying or running) and its node state is not reachable through the graph then.
//!
//! A thread the callback started (a worker of its own) has no frame: its calls on the node are
//! answered from a snapshot of the frame kept in a global map while the callback runs (the
//! parameters, border and local data: what it may read), so they do not wait for the graph that
//! is waiting for them.
//!
//! Concurrency: frames are thread-local; only the thread running a callback sees its frame, and
//! the runtime does not touch the context it lent while the callback runs, so the frame's
//! exclusive pointer is the only access to it for the callback's duration. Other threads never
//! reach that pointer: they read the snapshot, copies made when the frame was pushed, behind one
//! mutex (`RUNNING`). Interleavings: a worker reads before the callback changes its local data
//! (`vxSetNodeAttribute` in init) and sees the old value, or after and sees the new one — the
//! change and the snapshot's update happen under that mutex, in the callback's thread, before it
//! returns; a worker still asking after the callback returned finds no snapshot and goes to the
//! node (the graph is no longer busy with that callback). A node runs one callback at a time
//! (its run lock), so a key has one snapshot; a nested frame of the same node restores the
//! previous snapshot when it pops.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

use vx::{Kernel, LifecycleContext, MetaFormats, NodeKey, ProcessContext, Reference, ValidateContext, WeakKernel};

use crate::ffi::{put, take};
use crate::handle::FastMap;
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
    /// (map id, the mapped object's id, the mapping).
    maps: Vec<(usize, u64, Box<dyn Send>)>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Run `f` with a frame for node `key` lending `lent`; returns `f`'s result and the frame id it
/// ran under (meta-format handles name it). Whatever the callback left mapped is unmapped.
pub(crate) fn with_frame<R>(key: NodeKey, kernel: WeakKernel, lent: Lent, f: impl FnOnce(u64) -> R) -> R {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let snapshot = Snapshot {
        params: params_of(&lent).to_vec(),
        border: border_of(&lent),
        local: local_of(&lent),
        kernel: kernel.clone(),
    };
    let previous = lock_running().insert(key, snapshot);
    FRAMES.with(|fr| fr.borrow_mut().push(Frame { id, key, kernel, lent, maps: Vec::new() }));
    struct Pop(NodeKey, Option<Snapshot>);
    impl Drop for Pop {
        fn drop(&mut self) {
            let frame = FRAMES.with(|fr| fr.borrow_mut().pop());
            drop(frame); // its maps release their leases here
            let mut running = lock_running();
            match self.1.take() {
                Some(p) => running.insert(self.0, p),
                None => running.remove(&self.0),
            };
        }
    }
    let _pop = Pop(key, previous);
    f(id)
}

/// What another thread may read of a node whose callback runs (see the module doc).
struct Snapshot {
    params: Vec<Option<Reference>>,
    border: vx::BorderMode,
    local: (usize, usize),
    kernel: WeakKernel,
}

static RUNNING: LazyLock<Mutex<FastMap<NodeKey, Snapshot>>> = LazyLock::new(Default::default);

fn lock_running() -> MutexGuard<'static, FastMap<NodeKey, Snapshot>> {
    RUNNING.lock().unwrap_or_else(|p| p.into_inner())
}

/// The local data (size, address) the lent context has now.
fn local_of(lent: &Lent) -> (usize, usize) {
    // SAFETY: as in `params_of`.
    unsafe {
        match lent {
            Lent::Lifecycle(lc) => ((**lc).local_data_size(), (**lc).local_data_ptr() as usize),
            Lent::Process(pc) => ((**pc).local_data_size(), (**pc).local_data_ptr() as usize),
            Lent::Validate { .. } => (0, 0),
        }
    }
}

fn running<R>(key: NodeKey, f: impl FnOnce(&Snapshot) -> R) -> Option<R> {
    lock_running().get(&key).map(f)
}

fn with_node<R>(key: NodeKey, f: impl FnOnce(&mut Frame) -> R) -> Option<R> {
    FRAMES.with(|fr| fr.borrow_mut().iter_mut().rev().find(|x| x.key == key).map(f))
}

/// The kernel of the node whose callback runs here.
pub(crate) fn node_kernel(key: NodeKey) -> Option<Kernel> {
    with_node(key, |f| f.kernel.upgrade()).or_else(|| running(key, |s| s.kernel.upgrade())).flatten()
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
        .or_else(|| running(key, |s| s.params.get(index as usize).cloned().flatten()))
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
    // This thread's frame, else the snapshot of a callback another thread runs.
    let (border, local, params) = with_node(key, |f| (border_of(&f.lent), local_of(&f.lent), params_of(&f.lent).len()))
        .or_else(|| running(key, |s| (s.border, s.local, s.params.len())))?;
    // SAFETY: for every `put` below, the caller's buffer contract, forwarded by vxQueryNode.
    Some(unsafe {
        match attribute {
            VX_NODE_BORDER => put(ptr, size, crate::graph::border_t_of(border)),
            VX_NODE_LOCAL_DATA_SIZE => put(ptr, size, local.0),
            VX_NODE_LOCAL_DATA_PTR => put(ptr, size, local.1 as *mut c_void),
            VX_NODE_PARAMETERS => put(ptr, size, params as vx_uint32),
            VX_NODE_STATUS => put(ptr, size, VX_SUCCESS),
            VX_NODE_IS_REPLICATED | VX_NODE_VALID_RECT_RESET => put(ptr, size, VX_FALSE),
            _ => VX_ERROR_NOT_SUPPORTED,
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
        let status = unsafe {
            match attribute {
                VX_NODE_LOCAL_DATA_SIZE => {
                    take::<vx_size>(ptr, size).map_or_else(|s| s, |n| r(lc.set_local_data_size(n)))
                }
                VX_NODE_LOCAL_DATA_PTR => {
                    take::<*mut c_void>(ptr, size).map_or_else(|s| s, |p| r(lc.set_local_data_ptr(p)))
                }
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        };
        if status == VX_SUCCESS {
            let local = (lc.local_data_size(), lc.local_data_ptr() as usize);
            if let Some(s) = lock_running().get_mut(&key) {
                s.local = local;
            }
        }
        status
    })
    // Another thread than the callback's: refused, not waited for (the graph is busy).
    .or_else(|| running(key, |_| VX_ERROR_NOT_SUPPORTED))
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
            frame.maps.push((map_id, image.id(), Box::new(m)));
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
pub(crate) fn keep(map_id: usize, object: u64, map: vx::BytesMap) -> Result<(), vx::BytesMap> {
    FRAMES.with(|fr| match fr.borrow_mut().last_mut() {
        Some(frame) if matches!(frame.lent, Lent::Process(_)) => {
            frame.maps.push((map_id, object, Box::new(map)));
            Ok(())
        }
        _ => Err(map),
    })
}

/// Unmap `map_id` if a callback running here mapped it from `object` (true if it did). The
/// mapping is dropped after the frames' borrow ends.
pub(crate) fn unmap(map_id: usize, object: u64) -> bool {
    let gone = FRAMES.with(|fr| {
        let mut fr = fr.borrow_mut();
        for frame in fr.iter_mut().rev() {
            if let Some(i) = frame.maps.iter().position(|(id, obj, _)| *id == map_id && *obj == object) {
                return Some(frame.maps.swap_remove(i));
            }
        }
        None
    });
    gone.is_some()
}
