//! The C API's fixed cost per process: one-node graphs whose kernels do nothing, so what is
//! timed is the call path. Side by side in one run, rounds interleaved, on one graph built
//! through the C API:
//!
//! - `Rust Graph::process`: the vx-rs call on the graph (a Rust kernel that returns at once);
//! - `C vxProcessGraph`: the same graph through the exported C function (handle lookup, panic
//!   guard, status);
//! - `C vxProcessGraph, C kernel`: a second graph whose kernel is a C user kernel
//!   (`vxAddUserKernel`; its process returns at once), so the row adds the trampoline that lends
//!   the callback its node and parameter handles.
//!
//! Run: `cargo bench -p vx-rs-capi --bench c_fixed_cost` (`VX_BENCH_ROUNDS`, default 15). Prints
//! ns per process: min / median / max over rounds, each round the mean of a batch of calls, and
//! each C row's median minus the Rust row's.

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Instant;

use openvx::sys::consts::*;
use openvx::sys::*;
use vx::*;

unsafe extern "C" {
    fn vxCreateContext() -> vx_context;
    fn vxCreateGraph(c: vx_context) -> vx_graph;
    fn vxCreateImage(c: vx_context, w: u32, h: u32, f: vx_df_image) -> vx_image;
    fn vxGetKernelByName(c: vx_context, name: *const std::ffi::c_char) -> vx_kernel;
    fn vxCreateGenericNode(g: vx_graph, k: vx_kernel) -> vx_node;
    fn vxSetParameterByIndex(n: vx_node, i: u32, r: vx_reference) -> vx_status;
    fn vxVerifyGraph(g: vx_graph) -> vx_status;
    fn vxProcessGraph(g: vx_graph) -> vx_status;
    fn vxAddUserKernel(
        c: vx_context,
        name: *const std::ffi::c_char,
        e: vx_enum,
        f: vx_kernel_f,
        n: u32,
        v: vx_kernel_validate_f,
        i: vx_kernel_initialize_f,
        d: vx_kernel_deinitialize_f,
    ) -> vx_kernel;
    fn vxAddParameterToKernel(k: vx_kernel, i: u32, dir: vx_enum, t: vx_enum, s: vx_enum) -> vx_status;
    fn vxFinalizeKernel(k: vx_kernel) -> vx_status;
    fn vxSetMetaFormatFromReference(m: vx_meta_format, r: vx_reference) -> vx_status;
}

unsafe extern "C" fn c_noop(_: vx_node, _: *const vx_reference, _: u32) -> vx_status {
    VX_SUCCESS
}

unsafe extern "C" fn c_validate(_: vx_node, p: *const vx_reference, _: u32, m: *const vx_meta_format) -> vx_status {
    // SAFETY: the runtime passes two parameters and two meta formats (output 1 set).
    unsafe { vxSetMetaFormatFromReference(*m.add(1), *p) }
}

fn rust_noop(ctx: &Context) {
    let k = ctx
        .user_kernel("bench.noop", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            metas.get(1)?.set_from_reference(&Reference::from(v.image(0)?))?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
}

/// A verified one-node graph of kernel `name` over two 1×1 U8 images, built through the C API.
fn one_node(c: vx_context, name: &std::ffi::CStr) -> vx_graph {
    // SAFETY: valid handles throughout; each call is checked.
    unsafe {
        let g = vxCreateGraph(c);
        let (a, b) = (vxCreateImage(c, 1, 1, VX_DF_IMAGE_U8 as u32), vxCreateImage(c, 1, 1, VX_DF_IMAGE_U8 as u32));
        let n = vxCreateGenericNode(g, vxGetKernelByName(c, name.as_ptr()));
        assert_eq!(vxSetParameterByIndex(n, 0, a), VX_SUCCESS);
        assert_eq!(vxSetParameterByIndex(n, 1, b), VX_SUCCESS);
        assert_eq!(vxVerifyGraph(g), VX_SUCCESS);
        assert_eq!(vxProcessGraph(g), VX_SUCCESS);
        g
    }
}

/// Mean ns per call of `f` over a batch sized to take about 2 ms.
fn batch(f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    f();
    let once = t.elapsed().as_nanos().max(1) as f64;
    let n = ((2e6 / once) as u32).clamp(3, 200_000);
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

type Row = (&'static str, Box<dyn FnMut()>, Vec<f64>);

fn main() {
    let rounds: usize = std::env::var("VX_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    // SAFETY: the C API's own constructors; handles checked by the asserts in `one_node`.
    let c = unsafe { vxCreateContext() };
    let ctx = openvx::__context_of(c).expect("a context");
    rust_noop(&ctx);
    // SAFETY: as above; the C kernel's functions have the C signatures.
    unsafe {
        let k = vxAddUserKernel(
            c,
            c"bench.c_noop".as_ptr(),
            ctx.allocate_user_kernel_id().unwrap(),
            Some(c_noop),
            2,
            Some(c_validate),
            None,
            None,
        );
        assert_eq!(vxAddParameterToKernel(k, 0, VX_INPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED), VX_SUCCESS);
        assert_eq!(vxAddParameterToKernel(k, 1, VX_OUTPUT, VX_TYPE_IMAGE, VX_PARAMETER_STATE_REQUIRED), VX_SUCCESS);
        assert_eq!(vxFinalizeKernel(k), VX_SUCCESS);
    }
    let g = one_node(c, c"bench.noop");
    let gc = one_node(c, c"bench.c_noop");
    let rust_graph = openvx::__graph_of(g).expect("a graph");
    let (gp, gcp) = (g as usize, gc as usize);
    let c_api = move || {
        // SAFETY: a live graph handle, processed from this thread only.
        let s = unsafe { vxProcessGraph(black_box(gp) as vx_graph) };
        assert_eq!(s, 0)
    };
    let c_kernel = move || {
        // SAFETY: as above.
        let s = unsafe { vxProcessGraph(black_box(gcp) as vx_graph) };
        assert_eq!(s, 0)
    };
    let mut rows: Vec<Row> = vec![
        ("Rust Graph::process", Box::new(move || black_box(rust_graph.process()).unwrap()), Vec::new()),
        ("C vxProcessGraph", Box::new(c_api), Vec::new()),
        ("C vxProcessGraph, C kernel", Box::new(c_kernel), Vec::new()),
    ];
    for _ in 0..rounds {
        for (_, f, times) in rows.iter_mut() {
            times.push(batch(f.as_mut()));
        }
    }
    let median = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    println!("C API fixed cost per process, one-node graph, 1x1 U8 images, {rounds} rounds (ns per process)\n");
    println!("{:<30} {:>9} {:>9} {:>9} {:>12}", "row", "min", "median", "max", "vs Rust");
    let mut base = None;
    for (name, _, t) in rows.iter_mut() {
        let m = median(t);
        let b = *base.get_or_insert(m);
        println!("{name:<30} {:>9.1} {m:>9.1} {:>9.1} {:>+11.1}", t[0], t[t.len() - 1], m - b);
    }
    let _ = black_box(std::ptr::null::<c_void>());
}
