//! `vx_graph`, `vx_node` and `vx_parameter`: the graph and node functions of `vx_api.h` over
//! [`vx::Graph`] and [`vx::Node`]. While a node's callback runs, queries on that node are
//! answered from the callback's frame (`frames.rs`), since the graph is busy verifying or running.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use vx::{GraphState, Node, Reference};

use crate::context::{CContext, context_of, error_object};
use crate::ffi::{self, fail, guard, guard_ref, put};
use crate::frames;
use crate::handle::{self, Entry, Ident, Object, Parameter};
use crate::sys::consts::*;
use crate::sys::*;

/// The graph behind handle `g`, with its context.
pub(crate) fn graph_of(g: vx_graph) -> Result<(vx::Graph, Arc<CContext>), vx_status> {
    let e = handle::get(g, VX_TYPE_GRAPH)?;
    match (&e.object, e.ctx.clone()) {
        (Object::Graph(graph), Some(c)) => Ok(((**graph).clone(), c)),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

/// The node behind handle `n`, with its context.
pub(crate) fn node_of(n: vx_node) -> Result<(Node, Arc<CContext>), vx_status> {
    let e = handle::get(n, VX_TYPE_NODE)?;
    match (&e.object, e.ctx.clone()) {
        (Object::Node(node), Some(c)) => Ok((node.clone(), c)),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

/// The handle of a data object (one external or internal count more).
pub(crate) fn data_handle(cc: &Arc<CContext>, r: &Reference, external: bool) -> vx_reference {
    handle::handle_for(cc, Ident::Data(r.id()), external, || {
        Entry::new(r.data_type().code(), Some(Arc::clone(cc)), Object::Data(r.clone()))
    })
}

/// The handle of a node (one external or internal count more).
pub(crate) fn node_handle(cc: &Arc<CContext>, node: &Node, external: bool) -> vx_reference {
    let key = node.key();
    handle::handle_for(cc, Ident::Node(key), external, || {
        Entry::new(VX_TYPE_NODE, Some(Arc::clone(cc)), Object::Node(node.clone()))
    })
}

/// The data object behind handle `r` (any data type).
pub(crate) fn data_of(r: vx_reference) -> Result<Reference, vx_status> {
    match &handle::get(r, VX_TYPE_REFERENCE)?.object {
        Object::Data(d) => Ok(d.clone()),
        _ => Err(VX_ERROR_INVALID_REFERENCE),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateGraph(context: vx_context) -> vx_graph {
    guard_ref(context, || {
        let cc = match context_of(context) {
            Ok(c) => c,
            Err(_) => return std::ptr::null_mut(), // no context to own an error object
        };
        match vx::Graph::new(&cc.ctx) {
            Ok(g) => {
                let id = g.id();
                handle::handle_for(&cc, Ident::Graph(id), true, || {
                    Entry::new(VX_TYPE_GRAPH, Some(Arc::clone(&cc)), Object::Graph(CGraph::new(g, &cc)))
                })
            }
            Err(e) => {
                fail(Some(&cc), context, &e);
                error_object(Some(&cc), e.status().code())
            }
        }
    })
}

/// A graph handle's object: when the last handle goes (by `vxReleaseGraph` or
/// `vxReleaseReference`), the graph goes first (its nodes' deinit callbacks still get their node
/// handles), then what the context kept for its nodes (their handles for callbacks, their
/// completion callbacks).
pub(crate) struct CGraph {
    graph: Option<vx::Graph>,
    ctx: std::sync::Weak<CContext>,
}

impl CGraph {
    pub(crate) fn new(graph: vx::Graph, ctx: &Arc<CContext>) -> CGraph {
        CGraph { graph: Some(graph), ctx: Arc::downgrade(ctx) }
    }
}

impl std::ops::Deref for CGraph {
    type Target = vx::Graph;
    fn deref(&self) -> &vx::Graph {
        self.graph.as_ref().expect("taken only by drop")
    }
}

impl Drop for CGraph {
    fn drop(&mut self) {
        let Some(g) = self.graph.take() else { return };
        let id = g.id();
        drop(g);
        if let Some(cc) = self.ctx.upgrade() {
            cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).retain(|k, _| k.graph != id);
            cc.node_callbacks.lock().unwrap_or_else(|p| p.into_inner()).retain(|k, _| k.graph != id);
        }
    }
}

/// # Safety
/// `graph` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseGraph(graph: *mut vx_graph) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(graph, VX_TYPE_GRAPH) }
}

/// Run `f` on the graph behind `g` (borrowed from its entry: no clone on the hot path).
fn with_graph(g: vx_graph, f: impl FnOnce(&vx::Graph, &Arc<CContext>) -> vx_status) -> vx_status {
    guard(g, || {
        let e = match handle::get(g, VX_TYPE_GRAPH) {
            Ok(e) => e,
            Err(s) => return s,
        };
        match (&e.object, &e.ctx) {
            (Object::Graph(graph), Some(cc)) => f(graph, cc),
            _ => VX_ERROR_INVALID_REFERENCE,
        }
    })
}

fn status_of(cc: &Arc<CContext>, r: vx_reference, res: vx::Result<()>) -> vx_status {
    match res {
        Ok(()) => VX_SUCCESS,
        Err(e) => fail(Some(cc), r, &e),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxVerifyGraph(graph: vx_graph) -> vx_status {
    with_graph(graph, |g, cc| status_of(cc, graph, g.verify()))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxProcessGraph(graph: vx_graph) -> vx_status {
    with_graph(graph, |g, cc| status_of(cc, graph, g.process()))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxScheduleGraph(graph: vx_graph) -> vx_status {
    with_graph(graph, |g, cc| status_of(cc, graph, g.schedule()))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxWaitGraph(graph: vx_graph) -> vx_status {
    with_graph(graph, |g, cc| status_of(cc, graph, g.wait()))
}

#[unsafe(no_mangle)]
pub extern "C" fn vxIsGraphVerified(graph: vx_graph) -> vx_bool {
    ffi::guard_value(graph, VX_FALSE, || match graph_of(graph).map(|(g, _)| g.state()) {
        Ok(Ok(GraphState::Unverified)) | Ok(Err(_)) | Err(_) => VX_FALSE,
        Ok(Ok(_)) => VX_TRUE,
    })
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// `vx_perf_t` of a vx-rs [`Perf`](vx::Perf) (nanoseconds).
pub(crate) fn perf_t(p: &vx::Perf) -> vx_perf_t {
    vx_perf_t {
        tmp: nanos(p.last),
        beg: 0,
        end: 0,
        sum: nanos(p.sum),
        avg: nanos(p.avg()),
        min: nanos(p.min),
        num: p.num,
        max: nanos(p.max),
    }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryGraph(
    graph: vx_graph,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    with_graph(graph, |g, cc| {
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_GRAPH_NUMNODES => match g.num_nodes() {
                    Ok(n) => put(ptr, size, n as vx_uint32),
                    Err(e) => fail(Some(cc), graph, &e),
                },
                VX_GRAPH_PERFORMANCE => match g.perf() {
                    Ok(p) => put(ptr, size, perf_t(&p)),
                    Err(e) => fail(Some(cc), graph, &e),
                },
                VX_GRAPH_NUMPARAMETERS => match g.num_parameters() {
                    Ok(n) => put(ptr, size, n as vx_uint32),
                    Err(e) => fail(Some(cc), graph, &e),
                },
                VX_GRAPH_STATE => match g.state() {
                    Ok(s) => put(
                        ptr,
                        size,
                        match s {
                            GraphState::Unverified => VX_GRAPH_STATE_UNVERIFIED,
                            GraphState::Verified => VX_GRAPH_STATE_VERIFIED,
                            GraphState::Completed => VX_GRAPH_STATE_COMPLETED,
                            GraphState::Abandoned => VX_GRAPH_STATE_ABANDONED,
                            GraphState::Running => VX_GRAPH_STATE_RUNNING,
                        } as vx_enum,
                    ),
                    Err(e) => fail(Some(cc), graph, &e),
                },
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetGraphAttribute(
    graph: vx_graph,
    _attribute: vx_enum,
    _ptr: *const c_void,
    _size: vx_size,
) -> vx_status {
    // Every graph attribute of the spec is read-only.
    with_graph(graph, |_, _| VX_ERROR_NOT_SUPPORTED)
}

#[unsafe(no_mangle)]
pub extern "C" fn vxCreateGenericNode(graph: vx_graph, kernel: vx_kernel) -> vx_node {
    guard_ref(graph, || {
        let (g, cc) = match graph_of(graph) {
            Ok(x) => x,
            Err(s) => return error_object(handle::lookup(graph).and_then(|e| e.context()).as_ref(), s),
        };
        let k = match crate::kernel::kernel_of(kernel) {
            Ok(k) => k,
            Err(s) => return error_object(Some(&cc), s),
        };
        let none: Vec<Option<Reference>> = vec![None; k.num_params() as usize];
        match g.add_node(&k, none) {
            Ok(node) => {
                cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).insert(node.key(), node.clone());
                node_handle(&cc, &node, true)
            }
            Err(e) => {
                fail(Some(&cc), graph, &e);
                error_object(Some(&cc), e.status().code())
            }
        }
    })
}

/// # Safety
/// `node` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseNode(node: *mut vx_node) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(node, VX_TYPE_NODE) }
}

/// # Safety
/// `node` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxRemoveNode(node: *mut vx_node) -> vx_status {
    // SAFETY: forwarded contract.
    let n = unsafe { ffi::deref(node) };
    guard(n, || {
        let (nd, cc) = match node_of(n) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let Some(graph) = nd.graph() else { return VX_ERROR_INVALID_GRAPH };
        match graph.remove_node(&nd) {
            Ok(()) => {
                cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).remove(&nd.key());
                // SAFETY: forwarded contract.
                unsafe { ffi::release(node, VX_TYPE_NODE) }
            }
            Err(e) => fail(Some(&cc), n, &e),
        }
    })
}

pub(crate) fn border_t_of(b: vx::BorderMode) -> vx_border_t {
    let (mode, value) = match b {
        vx::BorderMode::Undefined => (VX_BORDER_UNDEFINED, 0),
        vx::BorderMode::Constant(v) => (VX_BORDER_CONSTANT, v),
        vx::BorderMode::Replicate => (VX_BORDER_REPLICATE, 0),
        _ => (VX_BORDER_UNDEFINED, 0),
    };
    let mut constant_value = vx_pixel_value_t { reserved: [0; 16] };
    constant_value.U32 = value;
    vx_border_t { mode, constant_value }
}

/// The vx-rs border of a `vx_border_t` (`None`: a mode vx-rs nodes do not take).
pub(crate) fn border_mode(b: &vx_border_t) -> Option<vx::BorderMode> {
    match b.mode {
        VX_BORDER_UNDEFINED => Some(vx::BorderMode::Undefined),
        VX_BORDER_REPLICATE => Some(vx::BorderMode::Replicate),
        // SAFETY: every field of the union is plain bytes; U32 reads the first four.
        VX_BORDER_CONSTANT => Some(vx::BorderMode::Constant(unsafe { b.constant_value.U32 } as _)),
        _ => None,
    }
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryNode(node: vx_node, attribute: vx_enum, ptr: *mut c_void, size: vx_size) -> vx_status {
    guard(node, || {
        let (nd, cc) = match node_of(node) {
            Ok(x) => x,
            Err(s) => return s,
        };
        // A node whose callback runs on this thread answers from the frame.
        if let Some(s) = frames::query_node(nd.key(), attribute, ptr, size) {
            return s;
        }
        let r = |res: vx::Result<vx_status>| res.unwrap_or_else(|e| fail(Some(&cc), node, &e));
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_NODE_STATUS => r(nd.status().map(|s| put(ptr, size, s.code()))),
                VX_NODE_PERFORMANCE => r(nd.perf().map(|p| put(ptr, size, perf_t(&p)))),
                VX_NODE_BORDER => r(nd.border().map(|b| put(ptr, size, border_t_of(b)))),
                VX_NODE_LOCAL_DATA_SIZE => r(nd.local_data_size().map(|n| put(ptr, size, n as vx_size))),
                VX_NODE_LOCAL_DATA_PTR => r(nd.local_data_ptr().map(|p| put(ptr, size, p))),
                VX_NODE_PARAMETERS => r(nd.num_parameters().map(|n| put(ptr, size, n))),
                VX_NODE_IS_REPLICATED => put(ptr, size, VX_FALSE),
                VX_NODE_REPLICATE_FLAGS => VX_ERROR_NOT_SUPPORTED,
                VX_NODE_VALID_RECT_RESET => put(ptr, size, VX_FALSE),
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxSetNodeAttribute(
    node: vx_node,
    attribute: vx_enum,
    ptr: *const c_void,
    size: vx_size,
) -> vx_status {
    guard(node, || {
        let (nd, cc) = match node_of(node) {
            Ok(x) => x,
            Err(s) => return s,
        };
        if let Some(s) = frames::set_node(nd.key(), attribute, ptr, size) {
            return s;
        }
        let r = |res: vx::Result<()>| res.map_or_else(|e| fail(Some(&cc), node, &e), |()| VX_SUCCESS);
        // SAFETY: for every `take` below, forwarded contract.
        unsafe {
            match attribute {
                VX_NODE_BORDER => match ffi::take::<vx_border_t>(ptr, size) {
                    Ok(b) => match border_mode(&b) {
                        Some(m) => r(nd.set_border(m)),
                        None => VX_ERROR_INVALID_VALUE,
                    },
                    Err(s) => s,
                },
                VX_NODE_LOCAL_DATA_SIZE => match ffi::take::<vx_size>(ptr, size) {
                    Ok(n) => r(nd.set_local_data_size(n)),
                    Err(s) => s,
                },
                VX_NODE_LOCAL_DATA_PTR => match ffi::take::<*mut c_void>(ptr, size) {
                    Ok(p) => r(nd.set_local_data_ptr(p)),
                    Err(s) => s,
                },
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxSetNodeTarget(
    node: vx_node,
    target_enum: vx_enum,
    target_string: *const std::ffi::c_char,
) -> vx_status {
    guard(node, || {
        let (nd, cc) = match node_of(node) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let res = match target_enum {
            VX_TARGET_ANY => nd.set_target(vx::TARGET_ANY),
            VX_TARGET_STRING => {
                // SAFETY: the caller passes a NUL-terminated string (or NULL, refused).
                match unsafe { ffi::text(target_string) } {
                    Some(t) => nd.set_target(&t.to_ascii_lowercase()),
                    None => return VX_ERROR_INVALID_PARAMETERS,
                }
            }
            _ => return VX_ERROR_NOT_SUPPORTED,
        };
        match res {
            Ok(()) => VX_SUCCESS,
            Err(e) => {
                fail(Some(&cc), node, &e);
                VX_ERROR_NOT_SUPPORTED
            }
        }
    })
}

/// `vx_parameter` of node `node`, index `index`.
#[unsafe(no_mangle)]
pub extern "C" fn vxGetParameterByIndex(node: vx_node, index: vx_uint32) -> vx_parameter {
    guard_ref(node, || {
        let (nd, cc) = match node_of(node) {
            Ok(x) => x,
            Err(s) => return error_object(handle::lookup(node).and_then(|e| e.context()).as_ref(), s),
        };
        let kernel = match frames::node_kernel(nd.key()).map_or_else(|| nd.kernel(), Ok) {
            Ok(k) => k,
            Err(e) => {
                fail(Some(&cc), node, &e);
                return error_object(Some(&cc), e.status().code());
            }
        };
        if index >= kernel.num_params() {
            cc.log(
                node,
                VX_ERROR_INVALID_PARAMETERS,
                &format!(
                    "vxGetParameterByIndex: no parameter {index}: the kernel '{}' has {}",
                    kernel.name(),
                    kernel.num_params()
                ),
            );
            return error_object(Some(&cc), VX_ERROR_INVALID_PARAMETERS);
        }
        let key = nd.key();
        handle::register(
            Entry::new(
                VX_TYPE_PARAMETER,
                Some(Arc::clone(&cc)),
                Object::Parameter(Parameter::Node { node: nd, key, kernel, index }),
            ),
            true,
        )
    })
}

/// # Safety
/// `param` must be NULL or point to a handle variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxReleaseParameter(param: *mut vx_parameter) -> vx_status {
    // SAFETY: forwarded contract.
    unsafe { ffi::release(param, VX_TYPE_PARAMETER) }
}

fn set_param(cc: &Arc<CContext>, node: vx_node, nd: &Node, index: u32, value: vx_reference) -> vx_status {
    let r = match data_of(value) {
        Ok(r) => r,
        Err(s) => {
            cc.log(node, s, &format!("vxSetParameterByIndex: parameter {index}: the value is not a live data object"));
            return s;
        }
    };
    // A delay slot's object binds the parameter to the slot's index (aging rebinds it).
    let delays = cc.delays.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let slot = delays.iter().find_map(|d| d.index_of(&r).map(|i| (d.clone(), i)));
    let res = match &slot {
        Some((d, i)) => d.bind(nd, index, *i),
        None => nd.set_parameter(index, r),
    };
    match res {
        Ok(()) => {
            // No longer bound to another delay's index: only once the parameter is set (a refused
            // value leaves the node as it was).
            for d in delays.iter().filter(|d| !slot.as_ref().is_some_and(|(s, _)| s.same_delay(d))) {
                d.unbind(nd, index);
            }
            VX_SUCCESS
        }
        Err(e) => fail(Some(cc), node, &e),
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn vxSetParameterByIndex(node: vx_node, index: vx_uint32, value: vx_reference) -> vx_status {
    guard(node, || match node_of(node) {
        Ok((nd, cc)) => set_param(&cc, node, &nd, index, value),
        Err(s) => s,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxSetParameterByReference(parameter: vx_parameter, value: vx_reference) -> vx_status {
    guard(parameter, || {
        let e = match handle::get(parameter, VX_TYPE_PARAMETER) {
            Ok(e) => e,
            Err(s) => return s,
        };
        match (&e.object, e.ctx.clone()) {
            (Object::Parameter(Parameter::Node { node: nd, index, .. }), Some(cc)) => {
                let nh = node_handle(&cc, nd, false);
                let s = set_param(&cc, nh, nd, *index, value);
                let _ = handle::release(nh, VX_TYPE_NODE, false);
                s
            }
            _ => VX_ERROR_INVALID_PARAMETERS,
        }
    })
}

/// # Safety
/// `ptr` must be NULL or point to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vxQueryParameter(
    parameter: vx_parameter,
    attribute: vx_enum,
    ptr: *mut c_void,
    size: vx_size,
) -> vx_status {
    guard(parameter, || {
        let e = match handle::get(parameter, VX_TYPE_PARAMETER) {
            Ok(e) => e,
            Err(s) => return s,
        };
        let (Object::Parameter(p), Some(cc)) = (&e.object, e.ctx.clone()) else { return VX_ERROR_INVALID_REFERENCE };
        let (kernel, index) = match p {
            Parameter::Node { kernel, index, .. } | Parameter::Kernel { kernel, index } => (kernel, *index),
        };
        let Some(spec) = kernel.parameter(index) else { return VX_ERROR_INVALID_PARAMETERS };
        // SAFETY: for every `put` below, forwarded contract.
        unsafe {
            match attribute {
                VX_PARAMETER_INDEX => put(ptr, size, index),
                VX_PARAMETER_DIRECTION => put(
                    ptr,
                    size,
                    match spec.direction {
                        vx::Direction::Input => VX_INPUT,
                        vx::Direction::Output => VX_OUTPUT,
                    } as vx_enum,
                ),
                VX_PARAMETER_TYPE => put(ptr, size, spec.data_type.code()),
                VX_PARAMETER_STATE => put(
                    ptr,
                    size,
                    match spec.state {
                        vx::ParamState::Required => VX_PARAMETER_STATE_REQUIRED,
                        vx::ParamState::Optional => VX_PARAMETER_STATE_OPTIONAL,
                    } as vx_enum,
                ),
                VX_PARAMETER_REF => {
                    // Checked before a count is taken: a refused query leaves no count behind.
                    if ptr.is_null() || size != size_of::<vx_reference>() {
                        return VX_ERROR_INVALID_PARAMETERS;
                    }
                    let Parameter::Node { node, key, .. } = p else {
                        return put(ptr, size, std::ptr::null_mut::<VxRef>());
                    };
                    let value = match frames::node_param(*key, index) {
                        Some(v) => Ok(v),
                        None => node.parameter(index),
                    };
                    match value {
                        Ok(Some(r)) => put(ptr, size, data_handle(&cc, &r, true)),
                        Ok(None) => put(ptr, size, std::ptr::null_mut::<VxRef>()),
                        Err(err) => fail(Some(&cc), parameter, &err),
                    }
                }
                VX_PARAMETER_META_FORMAT => VX_ERROR_NOT_SUPPORTED,
                _ => VX_ERROR_NOT_SUPPORTED,
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxAddParameterToGraph(graph: vx_graph, parameter: vx_parameter) -> vx_status {
    with_graph(graph, |g, cc| {
        let e = match handle::get(parameter, VX_TYPE_PARAMETER) {
            Ok(e) => e,
            Err(s) => return s,
        };
        let Object::Parameter(Parameter::Node { node, index, .. }) = &e.object else {
            return VX_ERROR_INVALID_REFERENCE;
        };
        match g.add_parameter(node, *index) {
            Ok(_) => VX_SUCCESS,
            Err(err) => fail(Some(cc), graph, &err),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxSetGraphParameterByIndex(graph: vx_graph, index: vx_uint32, value: vx_reference) -> vx_status {
    with_graph(graph, |g, cc| match data_of(value) {
        Ok(r) => status_of(cc, graph, g.set_parameter_by_index(index, r)),
        Err(s) => s,
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn vxGetGraphParameterByIndex(graph: vx_graph, index: vx_uint32) -> vx_parameter {
    guard_ref(graph, || {
        let (g, cc) = match graph_of(graph) {
            Ok(x) => x,
            Err(s) => return error_object(handle::lookup(graph).and_then(|e| e.context()).as_ref(), s),
        };
        match g.parameter_target(index) {
            Ok((node, pi)) => match node.kernel() {
                Ok(kernel) => {
                    let key = node.key();
                    handle::register(
                        Entry::new(
                            VX_TYPE_PARAMETER,
                            Some(Arc::clone(&cc)),
                            Object::Parameter(Parameter::Node { node, key, kernel, index: pi }),
                        ),
                        true,
                    )
                }
                Err(e) => {
                    fail(Some(&cc), graph, &e);
                    error_object(Some(&cc), e.status().code())
                }
            },
            Err(e) => {
                fail(Some(&cc), graph, &e);
                error_object(Some(&cc), e.status().code())
            }
        }
    })
}

/// `vxAssignNodeCallback`: `callback` runs after each successful run of the node, with the
/// node's handle; `VX_ACTION_ABANDON` abandons the graph. A node has at most one: assigning
/// another is refused (`VX_ERROR_NOT_SUPPORTED`) until NULL clears it, as the specification says.
#[unsafe(no_mangle)]
pub extern "C" fn vxAssignNodeCallback(node: vx_node, callback: vx_nodecomplete_f) -> vx_status {
    guard(node, || {
        let (nd, cc) = match node_of(node) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let key = nd.key();
        let mut callbacks = cc.node_callbacks.lock().unwrap_or_else(|p| p.into_inner());
        if callback.is_some() && callbacks.get(&key).is_some_and(|c| c.is_some()) {
            drop(callbacks); // a log callback may call back in
            cc.log(
                node,
                VX_ERROR_NOT_SUPPORTED,
                "vxAssignNodeCallback: the node already has a callback; assign NULL first",
            );
            return VX_ERROR_NOT_SUPPORTED;
        }
        let res = match callback {
            None => nd.set_callback(None::<fn(&vx::NodeCompletion<'_>) -> vx::NodeAction>),
            Some(f) => {
                let ctx = Arc::downgrade(&cc);
                nd.set_callback(Some(move |done: &vx::NodeCompletion<'_>| {
                    let Some(cc) = ctx.upgrade() else { return vx::NodeAction::Continue };
                    let n = cc.nodes.lock().unwrap_or_else(|p| p.into_inner()).get(&done.key).cloned();
                    let h = n.map_or(std::ptr::null_mut(), |n| node_handle(&cc, &n, false));
                    // SAFETY: the application assigned `f` as a `vx_nodecomplete_f`; the node
                    // handle is lent for the call.
                    let action = unsafe { f(h) };
                    if !h.is_null() {
                        drop(handle::release(h, VX_TYPE_NODE, false));
                    }
                    if action == VX_ACTION_ABANDON { vx::NodeAction::Abandon } else { vx::NodeAction::Continue }
                }))
            }
        };
        match res {
            Ok(()) => {
                callbacks.insert(key, callback);
                VX_SUCCESS
            }
            Err(e) => {
                drop(callbacks);
                fail(Some(&cc), node, &e)
            }
        }
    })
}

/// `vxRetrieveNodeCallback`: the callback assigned to the node, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn vxRetrieveNodeCallback(node: vx_node) -> vx_nodecomplete_f {
    ffi::guard_value(node, None, || {
        let (nd, cc) = node_of(node).ok()?;
        cc.node_callbacks.lock().unwrap_or_else(|p| p.into_inner()).get(&nd.key()).copied().flatten()
    })
}

/// `vxReplicateNode`: checked (graph, node of that graph, flags), then refused: vx-rs has no
/// node replication yet (`VX_ERROR_NOT_SUPPORTED`, said in the log).
#[unsafe(no_mangle)]
pub extern "C" fn vxReplicateNode(
    graph: vx_graph,
    first_node: vx_node,
    replicate: *mut vx_bool,
    number_of_parameters: vx_uint32,
) -> vx_status {
    guard(graph, || {
        let (g, cc) = match graph_of(graph) {
            Ok(x) => x,
            Err(s) => return s,
        };
        let (nd, _) = match node_of(first_node) {
            Ok(x) => x,
            Err(s) => return s,
        };
        if nd.key().graph != g.id() {
            cc.log(graph, VX_ERROR_INVALID_PARAMETERS, "vxReplicateNode: the node is not in this graph");
            return VX_ERROR_INVALID_PARAMETERS;
        }
        if replicate.is_null() || nd.num_parameters().is_ok_and(|n| n != number_of_parameters) {
            return VX_ERROR_INVALID_PARAMETERS;
        }
        cc.log(graph, VX_ERROR_NOT_SUPPORTED, "vxReplicateNode: node replication is not implemented in vx-rs yet");
        VX_ERROR_NOT_SUPPORTED
    })
}
