//! The re-verification after a reload (`graph/verify/rebound.rs`) where a new version changes what
//! its validator returns, through the in-process test hook (`Kernel::__replace_in_process`): the
//! rebound node's new output meta re-verifies its readers and the graph passes run, with the result
//! of a full verification (the tests turn on the check that compares the two, an error on any
//! difference).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

use common::*;
use vx::*;

/// `in → out` whose output is the input's size divided by `div`, copying the top-left pixels;
/// its validator calls are counted.
fn shrink(ctx: &Context, name: &str, id: Option<i32>, div: u32, key: u64, calls: Arc<AtomicU32>) -> Kernel {
    let staged = id.is_some();
    let id = id.unwrap_or_else(|| ctx.allocate_user_kernel_id().unwrap());
    let k = ctx
        .user_kernel(name, id, 2)
        .__reload_test_hook(key, staged)
        .validate(move |v, metas| {
            calls.fetch_add(1, SeqCst);
            let i = v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, i.width() / div, i.height() / div)?;
            Ok(())
        })
        .process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..o.height() {
                let w = o.width() as usize;
                o.row_mut(y).copy_from_slice(&i.row(y)[..w]);
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    k
}

/// `in → out` of any size whose output is a fixed 4×4 (the input's top-left corner).
fn corner(ctx: &Context, calls: Arc<AtomicU32>) -> Kernel {
    let k = ctx
        .user_kernel("test.corner", ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(move |v, metas| {
            calls.fetch_add(1, SeqCst);
            v.expect_image_format(0, ImageFormat::U8)?;
            metas.get(1)?.set_image(ImageFormat::U8, 4, 4)?;
            Ok(())
        })
        .process(|p| {
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..4 {
                o.row_mut(y).copy_from_slice(&i.row(y)[..4]);
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    k
}

#[test]
fn a_new_version_changing_its_output_meta_reverifies_the_readers_with_a_full_verifications_result() {
    vx::__verify_check_always();
    let ctx = ctx();
    let (a_calls, b_calls) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let a1 = shrink(&ctx, "test.shrink", None, 1, 7, a_calls.clone());
    let b = corner(&ctx, b_calls.clone());
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 16, 8, |x, y| (x + 16 * y) as u8);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    g.add_node(&a1, [&src, &v]).unwrap();
    g.add_node(&b, [&v, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!((v.width(), v.height()), (16, 8));
    assert_eq!((a_calls.load(SeqCst), b_calls.load(SeqCst)), (1, 1));
    let want: Vec<u8> = (0..4).flat_map(|y| (0..4).map(move |x| (x + 16 * y) as u8)).collect();
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);

    // Each re-verification (and each move in place) is followed by a complete one, compared:
    // every validator once more.
    let check = 1;

    // Same validator key, same shape, no lifecycle: the node moves to the new version in place
    // (its validator is not called again).
    let a2 = shrink(&ctx, "test.shrink", Some(a1.enumeration()), 1, 7, a_calls.clone());
    a1.__replace_in_process(&a2).unwrap();
    g.process().unwrap();
    assert_eq!((a_calls.load(SeqCst), b_calls.load(SeqCst)), (1 + check, 1 + check));
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);

    // Key 0 (another shape: the key is part of it): the rebound node is validated again; nothing
    // it outputs changed, its reader is not.
    let a3 = shrink(&ctx, "test.shrink", Some(a1.enumeration()), 1, 0, a_calls.clone());
    a2.__replace_in_process(&a3).unwrap();
    g.process().unwrap();
    assert_eq!((a_calls.load(SeqCst), b_calls.load(SeqCst)), (2 + check, 1 + check));
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);

    // Key 0 and a validator returning another size: the virtual image is completed anew, its
    // reader re-verified, the graph passes run (then compared with a complete verification).
    let a4 = shrink(&ctx, "test.shrink", Some(a1.enumeration()), 2, 0, a_calls.clone());
    a3.__replace_in_process(&a4).unwrap();
    g.process().unwrap();
    assert_eq!((v.width(), v.height()), (8, 4));
    assert_eq!((a_calls.load(SeqCst), b_calls.load(SeqCst)), (3 + 2 * check, 2 + 2 * check));
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);

    // An explicit verify afterwards agrees with what the re-verification left.
    let plan = format!("{:?}", g.memory_plan().unwrap());
    g.verify().unwrap();
    assert_eq!(format!("{:?}", g.memory_plan().unwrap()), plan);
    assert_eq!((v.width(), v.height()), (8, 4));
}

#[test]
fn a_kept_node_downstream_of_a_changed_one_is_validated_again() {
    vx::__verify_check_always();
    let ctx = ctx();
    let (a_calls, c_calls, b_calls) =
        (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let a1 = shrink(&ctx, "test.first", None, 1, 0, a_calls.clone());
    let c1 = shrink(&ctx, "test.second", None, 1, 9, c_calls.clone());
    let b = corner(&ctx, b_calls.clone());
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 16, 8, |x, y| (x + 16 * y) as u8);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let w = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
    g.add_node(&a1, [&src, &v]).unwrap();
    g.add_node(&c1, [&v, &w]).unwrap();
    g.add_node(&b, [&w, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!((a_calls.load(SeqCst), c_calls.load(SeqCst), b_calls.load(SeqCst)), (1, 1, 1));

    // Both rebound: the first halves its output; the second keeps its key (it moves in place) but
    // its input changed, so it is validated again (and completes its output anew), and so is the
    // reader after it. Then a complete verification, compared — also right after
    // the second moves in place (the graph is idle when its new version is published).
    let a2 = shrink(&ctx, "test.first", Some(a1.enumeration()), 2, 0, a_calls.clone());
    let c2 = shrink(&ctx, "test.second", Some(c1.enumeration()), 1, 9, c_calls.clone());
    a1.__replace_in_process(&a2).unwrap();
    c1.__replace_in_process(&c2).unwrap();
    g.process().unwrap();
    assert_eq!((v.width(), v.height(), w.width(), w.height()), (8, 4, 8, 4));
    let check = 1;
    assert_eq!(
        (a_calls.load(SeqCst), c_calls.load(SeqCst), b_calls.load(SeqCst)),
        (2 + 2 * check, 2 + 2 * check, 2 + 2 * check)
    );
    let want: Vec<u8> = (0..4).flat_map(|y| (0..4).map(move |x| (x + 16 * y) as u8)).collect();
    assert_eq!(dst.to_vec::<u8>().unwrap(), want);
}
