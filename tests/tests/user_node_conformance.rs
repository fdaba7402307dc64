//! The behaviour of the Khronos conformance tests for user nodes (test_user_node / UserNode.*),
//! written fresh in Rust against vx-rs: local data modes, callback counts across verifications,
//! local-data attribute rules, valid-rectangle callback, release, kernel removal, id allocation
//! and kernel counts.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};

use vx::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum LocalMode {
    /// No local data.
    None,
    /// VX_KERNEL_LOCAL_DATA_SIZE = 10: the framework allocates.
    Framework10,
    /// Kernel size 0; init sets size 10 and a pointer it allocated.
    Kernel10,
}

#[derive(Default)]
struct Calls {
    validate: AtomicU32,
    init: AtomicU32,
    deinit: AtomicU32,
    process: AtomicU32,
    /// Init/deinit attempted a forbidden local-data change and was refused.
    refused_in_init: AtomicBool,
    refused_in_deinit: AtomicBool,
    /// The pointer the kernel allocated (Kernel10).
    kernel_ptr: AtomicUsize,
}

impl Calls {
    fn counts(&self) -> (u32, u32, u32, u32) {
        (self.validate.load(SeqCst), self.init.load(SeqCst), self.deinit.load(SeqCst), self.process.load(SeqCst))
    }
}

/// The two-parameter kernel of the conformance test: U8 image in, U8 image out (a copy).
fn add_own_kernel(ctx: &Context, mode: LocalMode, calls: Arc<Calls>) -> Kernel {
    let id = ctx.allocate_user_kernel_id().unwrap();
    let (cv, ci, cd, cp) = (calls.clone(), calls.clone(), calls.clone(), calls);
    let k = ctx
        .user_kernel("org.khronos.test.own_user_kernel", id, 2)
        .validate(move |v, metas| {
            cv.validate.fetch_add(1, SeqCst);
            let input = v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_from_reference(&Reference::from(input))?;
            Ok(())
        })
        .init(move |lc| {
            ci.init.fetch_add(1, SeqCst);
            match mode {
                LocalMode::None => {}
                LocalMode::Framework10 => {
                    // The kernel declared a size: init may not touch the node's local data.
                    let a = lc.set_local_data_size(10);
                    let b = lc.set_local_data_ptr(std::ptr::null_mut());
                    if a.as_ref().is_err_and(|e| e.kind() == ErrorKind::NotSupported) && b.is_err() {
                        ci.refused_in_init.store(true, SeqCst);
                    }
                    assert_eq!(lc.local_data_size(), 10, "framework size is visible in init");
                    assert!(!lc.local_data_ptr().is_null(), "framework buffer exists before init");
                }
                LocalMode::Kernel10 => {
                    let p = Box::into_raw(Box::new([0u8; 10])) as *mut c_void;
                    lc.set_local_data_size(10)?;
                    lc.set_local_data_ptr(p)?;
                    ci.kernel_ptr.store(p as usize, SeqCst);
                }
            }
            Ok(())
        })
        .deinit(move |lc| {
            cd.deinit.fetch_add(1, SeqCst);
            match mode {
                LocalMode::None => {}
                LocalMode::Framework10 => {
                    if lc.set_local_data_ptr(std::ptr::null_mut()).is_err() {
                        cd.refused_in_deinit.store(true, SeqCst);
                    }
                }
                LocalMode::Kernel10 => {
                    let p = lc.local_data_ptr();
                    assert_eq!(p as usize, cd.kernel_ptr.load(SeqCst));
                    // SAFETY: p is the Box<[u8; 10]> this kernel's init leaked; the framework never
                    // frees or dereferences a kernel-set pointer, so we reclaim it exactly once here
                    // and clear the attribute.
                    drop(unsafe { Box::from_raw(p as *mut [u8; 10]) });
                    lc.set_local_data_ptr(std::ptr::null_mut())?;
                }
            }
            Ok(())
        })
        .process(move |p| {
            cp.process.fetch_add(1, SeqCst);
            if mode == LocalMode::Framework10 {
                // Framework local data is usable during process.
                let local = p.local_data().expect("framework local data during process");
                assert_eq!(local.len(), 10);
                local.fill(7);
            }
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            Ok(())
        })
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    if mode == LocalMode::Framework10 {
        k.set_local_data_size(10).unwrap();
    }
    k.finalize().unwrap();
    k
}

fn expected_local(mode: LocalMode, calls: &Calls, node: &Node) {
    let (size, ptr) = (node.local_data_size().unwrap(), node.local_data_ptr().unwrap());
    match mode {
        LocalMode::None => {
            assert_eq!(size, 0);
            assert!(ptr.is_null());
        }
        LocalMode::Framework10 => {
            assert_eq!(size, 10);
            assert!(!ptr.is_null());
            assert_eq!(ptr as usize % BUFFER_ALIGN, 0);
        }
        LocalMode::Kernel10 => {
            assert_eq!(size, 10);
            assert_eq!(ptr as usize, calls.kernel_ptr.load(SeqCst));
        }
    }
}

fn run_user_node(mode: LocalMode) {
    let ctx = Context::builder().threads(2).build().unwrap();
    let (k0, u0) = (ctx.kernel_count(), ctx.unique_kernel_count());
    let calls = Arc::new(Calls::default());
    let kernel = add_own_kernel(&ctx, mode, calls.clone());
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (k0 + 1, u0 + 1));

    let graph = Graph::with_name(&ctx, "user_node").unwrap();
    let src = Image::new(&ctx, 128, 128, ImageFormat::U8).unwrap();
    let pixels: Vec<u8> = (0..128 * 128).map(|i| (i * 7 % 251) as u8).collect();
    src.copy_from(Rect::full(128, 128), 0, &pixels).unwrap();
    let dst = Image::new(&ctx, 128, 128, ImageFormat::U8).unwrap();
    let node = graph.add_node(&kernel, [&src, &dst]).unwrap();

    // First verification: validate and init, no deinit.
    graph.verify().unwrap();
    assert_eq!(calls.counts(), (1, 1, 0, 0));
    expected_local(mode, &calls, &node);

    // Second verification = re-verification: deinit, validate, init.
    graph.verify().unwrap();
    assert_eq!(calls.counts(), (2, 2, 1, 0));
    expected_local(mode, &calls, &node);

    // Setting local data from outside a callback is refused.
    assert_eq!(node.set_local_data_size(10).unwrap_err().kind(), ErrorKind::NotSupported);
    assert_eq!(node.set_local_data_ptr(std::ptr::null_mut()).unwrap_err().kind(), ErrorKind::NotSupported);
    expected_local(mode, &calls, &node);

    // Process calls only the kernel function.
    graph.process().unwrap();
    assert_eq!(calls.counts(), (2, 2, 1, 1));
    assert_eq!(dst.to_vec::<u8>().unwrap(), pixels);
    assert_eq!(node.status().unwrap(), Status::Success);
    assert_eq!(node.perf().unwrap().num, 1);

    if mode == LocalMode::Framework10 {
        assert!(calls.refused_in_init.load(SeqCst), "init must not set local data when the kernel size is 10");
        assert!(calls.refused_in_deinit.load(SeqCst), "deinit must not set a framework-set pointer");
    }

    // A kernel still used by a node cannot be removed.
    let err = ctx.kernel_by_name("org.khronos.test.own_user_kernel").unwrap().remove().unwrap_err();
    assert_eq!(err.status(), Status::Failure);

    // Releasing the node and graph runs deinit.
    drop(node);
    drop(graph);
    assert_eq!(calls.counts(), (2, 2, 2, 1));

    // Now the kernel can be removed, and the counts go back.
    kernel.remove().unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (k0, u0));
    assert_eq!(ctx.kernel_by_name("org.khronos.test.own_user_kernel").unwrap_err().kind(), ErrorKind::InvalidReference);
}

#[test]
fn user_node_without_local_data() {
    run_user_node(LocalMode::None);
}

#[test]
fn user_node_with_framework_allocated_local_data() {
    run_user_node(LocalMode::Framework10);
}

#[test]
fn user_node_with_kernel_allocated_local_data() {
    run_user_node(LocalMode::Kernel10);
}

#[test]
fn valid_rectangle_callback_shrinks_output_by_two() {
    let ctx = Context::new().unwrap();
    let k = ctx
        .user_kernel("test.shrink", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width(), i.height())?.set_valid_rect_callback(
                |index, inputs, out| {
                    assert_eq!(index, 1);
                    assert_eq!((inputs.len(), out.len()), (1, 1));
                    let r = inputs[0];
                    out[0] = Rect::new(r.start_x + 2, r.start_y + 2, r.end_x - 2, r.end_y - 2);
                    Ok(())
                },
            )?;
            Ok(())
        })
        .process(|_| Ok(()))
        .add()
        .unwrap();
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.add_parameter(1, ParamDirection::Output, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();

    let graph = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 128, 128, ImageFormat::U8).unwrap();
    let mid = Image::new_virtual(&graph, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 128, 128, ImageFormat::U8).unwrap();
    graph.add_node(&k, [&src, &mid]).unwrap();
    graph.add_node(&k, [&mid, &dst]).unwrap();
    graph.verify().unwrap();
    assert_eq!(mid.valid_region(), Rect::new(2, 2, 126, 126));
    // Propagated through a second node: the callback sees the first output's valid rectangle.
    assert_eq!(dst.valid_region(), Rect::new(4, 4, 124, 124));

    // A smaller input valid region propagates too.
    src.set_valid_rectangle(Some(Rect::new(10, 10, 100, 100))).unwrap();
    graph.verify().unwrap();
    assert_eq!(mid.valid_region(), Rect::new(12, 12, 98, 98));
}

#[test]
fn user_kernel_id_allocation_ranges_and_exhaustion() {
    let ctx = Context::new().unwrap();
    let base = kernel_base(VX_ID_USER, 0);
    assert_eq!(base as u32, 0xFFE0_0000, "VX_KERNEL_BASE(VX_ID_USER, 0)");
    for i in 0..USER_KERNEL_ID_POOL {
        assert_eq!(ctx.allocate_user_kernel_id().unwrap(), base + i as i32);
    }
    let e = ctx.allocate_user_kernel_id().unwrap_err();
    assert_eq!(e.status(), Status::NoResources);

    for lib in 1..=255 {
        let id = ctx.allocate_user_kernel_library_id().unwrap();
        assert_eq!(id, lib);
        // The documented use: VX_KERNEL_BASE(VX_ID_USER, libraryId) + n stays inside the user range.
        assert_eq!(kernel_base(VX_ID_USER, id as u32) as u32 >> 20, VX_ID_USER);
    }
    assert_eq!(ctx.allocate_user_kernel_library_id().unwrap_err().status(), Status::NoResources);

    // Pools are per context.
    let other = Context::new().unwrap();
    assert_eq!(other.allocate_user_kernel_id().unwrap(), base);
    assert_eq!(other.allocate_user_kernel_library_id().unwrap(), 1);
}

#[test]
fn kernel_counts_follow_add_finalize_remove() {
    let ctx = Context::new().unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (0, 0));
    let k = ctx.user_kernel("test.count", 1, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (1, 0), "added, not finalized");
    // An unfinalized kernel is not visible to lookups …
    assert!(ctx.kernel_by_name("test.count").is_err());
    k.add_parameter(0, ParamDirection::Input, DataType::Image, ParamState::Required).unwrap();
    k.finalize().unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (1, 1));
    assert_eq!(ctx.kernel_by_enum(1).unwrap().name(), "test.count");
    k.remove().unwrap();
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count()), (0, 0));

    // … and an unfinalized kernel can be removed.
    let k = ctx.user_kernel("test.unfinalized", 2, 1).validate(|_, _| Ok(())).process(|_| Ok(())).add().unwrap();
    k.remove().unwrap();
    assert_eq!(ctx.kernel_count(), 0);
}
