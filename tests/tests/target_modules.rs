//! A module that publishes a target kernel (`vx_testmod` with `target-kernel`: `testmod.gain`,
//! implemented on target `tm_dsp` only, through the module ABI's `TargetDesc`): loaded, placed on
//! its target by the default rule, create run on the target's thread, sent commands (with a scalar
//! reference) serialized with process, reloaded while the graph keeps its node, refused where the
//! context has no such target.

use std::path::{Path, PathBuf};
use std::time::Duration;

use vx::*;
use vx_tests::{plugin_dir, testmod};

const LONG: Duration = Duration::from_secs(10);

fn install(dir: &Path, name: &str, lib: &Path) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::copy(lib, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join(format!("lib{name}.so"))).unwrap();
}

/// A context with target `tm_dsp` that loaded `vx_testmod --features target-kernel` as `name`
/// from a plugin directory of its own, and version 2 of it, built for a reload.
struct Loaded {
    ctx: Context,
    dir: PathBuf,
    v2: PathBuf,
}

fn load_target_module(name: &str, dir_name: &str) -> Loaded {
    let (v1, v2) = (testmod(name, &["target-kernel"]), testmod(name, &["target-kernel", "v2"]));
    let dir = plugin_dir(dir_name, &[(name, &v1)]);
    let ctx = Context::builder().threads(2).target(TargetConfig::new("tm_dsp")).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module(name).unwrap();
    Loaded { ctx, dir, v2 }
}

#[test]
fn a_module_target_kernel_is_loaded_used_sent_commands_and_reloaded() {
    let name = "testmod_target";
    let Loaded { ctx, dir, v2 } = load_target_module(name, "target");
    let k = ctx.kernel_by_name("testmod.gain").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(4, 1), 0, &[1u8, 2, 3, 100]).unwrap();
    let dst = Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    let n = g.add_node(&k, [&src, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!(n.target().unwrap(), "tm_dsp", "the kernel's only target");
    assert_eq!(dst.to_vec::<u8>().unwrap(), [1, 2, 3, 100], "gain 1 from create");
    n.send_command(2, &[], LONG).expect("create ran on the target's thread");

    let gain = Scalar::new(&ctx, ScalarValue::Uint8(2)).unwrap();
    n.send_command(1, &[Reference::from(&gain)], LONG).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [2, 4, 6, 200]);
    let wrong = Scalar::new(&ctx, ScalarValue::Int32(2)).unwrap();
    let e = n.send_command(1, &[Reference::from(&wrong)], LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidType, "the module's control status: {e}");
    assert!(e.to_string().contains("the gain is a U8 scalar"), "{e}");
    let e = n.send_command(9, &[], LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);

    // Reload: the node moves to version 2 at its next frame (create again, on the target: gain 1).
    install(&dir, name, &v2);
    ctx.reload_module(name).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [2, 3, 4, 101], "v2: in × 1 + 1");
    assert_eq!(g.reloads().unwrap(), 1);
    n.send_command(1, &[Reference::from(&gain)], LONG).unwrap();
    n.send_command(2, &[], LONG).expect("v2's create ran on the target's thread too");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [3, 5, 7, 201]);
    drop(g);
    ctx.unload_module(name).unwrap();
    assert!(ctx.memory_leaks().is_empty());

    // A context without the target cannot place the kernel.
    let bare = Context::builder().threads(1).build().unwrap();
    bare.add_module_dir(&dir);
    bare.load_module(name).unwrap();
    let g = Graph::new(&bare).unwrap();
    let (s, d) = (Image::new(&bare, 4, 1, ImageFormat::U8).unwrap(), Image::new(&bare, 4, 1, ImageFormat::U8).unwrap());
    g.add_node(&bare.kernel_by_name("testmod.gain").unwrap(), [&s, &d]).unwrap();
    let e = g.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("tm_dsp"), "{e}");
}

#[test]
fn a_pipelined_stream_keeps_flowing_through_a_module_reload_and_no_frame_mixes_versions() {
    // Two `testmod.gain` nodes in a chain on `tm_dsp`, pipelined at depth 2. Version 1 copies
    // (gain 1), version 2 adds 1: a frame gives x (v1), x + 2 (v2), never x + 1 (a frame that ran
    // one node on each version).
    let name = "testmod_target_pipe";
    let Loaded { ctx, dir, v2 } = load_target_module(name, "target-pipe");
    let k = ctx.kernel_by_name("testmod.gain").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let img = || Image::new(&ctx, 4, 1, ImageFormat::U8).unwrap();
    let (ins, outs) = ([img(), img()], [img(), img()]);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let n0 = g.add_node(&k, [&ins[0], &v]).unwrap();
    let n1 = g.add_node(&k, [&v, &outs[0]]).unwrap();
    let (p_in, p_out) = (g.add_parameter(&n0, 0).unwrap(), g.add_parameter(&n1, 1).unwrap());
    g.set_schedule_config(ScheduleConfig::queue_auto().depth(2).queue(p_in, ins.clone()).queue(p_out, outs.clone()))
        .unwrap();
    const FRAMES: usize = 40;
    let pixels = |f: usize| [f as u8, f as u8 + 1, 50, 100];
    let enqueue = |f: usize, i: &Image, o: &Image| {
        i.copy_from(Rect::full(4, 1), 0, &pixels(f)).unwrap();
        g.enqueue(p_in, i).unwrap();
        g.enqueue(p_out, o).unwrap();
    };
    for f in 0..2 {
        enqueue(f, &ins[f], &outs[f]);
    }
    let mut versions = Vec::new();
    for f in 0..FRAMES {
        if f == FRAMES / 2 {
            install(&dir, name, &v2);
            ctx.reload_module(name).unwrap();
        }
        let out = g.dequeue(p_out).unwrap();
        out.result.clone().unwrap();
        let input = g.dequeue(p_in).unwrap();
        let got = out.reference.as_image().unwrap().to_vec::<u8>().unwrap();
        let x = pixels(f);
        let v = match got[..] {
            ref p if p == x => 1,
            ref p if p == x.map(|b| b + 2) => 2,
            ref p => panic!("frame {f}: {p:?} from input {x:?} is neither version (mixed versions?)"),
        };
        versions.push(v);
        if f + 2 < FRAMES {
            enqueue(f + 2, input.reference.as_image().unwrap(), out.reference.as_image().unwrap());
        }
    }
    g.wait().unwrap();
    // Version 1 until the reload, version 2 for every frame admitted after it.
    let switch = versions.iter().position(|&v| v == 2).expect("the reload took effect");
    assert!((FRAMES / 2..=FRAMES / 2 + 2).contains(&switch), "{versions:?}");
    assert!(versions[switch..].iter().all(|&v| v == 2), "{versions:?}");
    assert_eq!(g.reloads().unwrap(), 2, "both nodes rebound once");
    drop(g);
    ctx.unload_module(name).unwrap();
    assert!(ctx.memory_leaks().is_empty());
}
