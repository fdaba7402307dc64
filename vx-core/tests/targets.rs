//! Targets and target kernels (TIOVX user target kernels, `vx_khr_target_kernel`), one test per
//! guideline of `tiovx-user-target-kernels.txt`: create sequentially inside verify on the node's
//! target, delete inside release, control serialized with process, control only between verify and
//! release, the timeout honoured; plus placement rules, per-target implementations, the typed
//! instance context, the deadlocks the notes warn about, a full queue, a panicking target,
//! schedule/wait and completion callbacks.

mod common;

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::u8_kernel as kernel;
use vx::*;

const W: u32 = 8;
const H: u32 = 2;
const LONG: Duration = Duration::from_secs(10);

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("?").to_owned()
}

/// Output = input + `add` (wrapping).
fn add(p: &mut ProcessContext<'_>, add: u8) -> Result<()> {
    let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
    for y in 0..i.height() {
        for (o, i) in o.row_mut(y).iter_mut().zip(i.row(y)) {
            *o = i.wrapping_add(add);
        }
    }
    Ok(())
}

fn input(ctx: &Context) -> Image {
    let a = Image::new(ctx, W, H, ImageFormat::U8).unwrap();
    let px: Vec<u8> = (0..W * H).map(|i| i as u8).collect();
    a.copy_from(Rect::full(W, H), 0, &px).unwrap();
    a
}

fn out(ctx: &Context) -> Image {
    Image::new(ctx, W, H, ImageFormat::U8).unwrap()
}

/// Process `g` over and over on another thread while `f` runs; the frames processed meanwhile.
/// The processing stops when `f` returns or panics (a failing `f` fails the test, not hangs it).
fn processing_while(g: &Graph, f: impl FnOnce()) -> usize {
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, SeqCst);
        }
    }
    let stop = AtomicBool::new(false);
    let frames = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(SeqCst) {
                g.process().unwrap();
                frames.fetch_add(1, SeqCst);
            }
        });
        let _stop = StopOnDrop(&stop);
        f();
    });
    frames.into_inner()
}

fn ctx_with(targets: &[TargetConfig]) -> Context {
    let mut b = Context::builder().threads(2);
    for t in targets {
        b = b.target(t.clone());
    }
    b.build().unwrap()
}

#[test]
fn create_runs_sequentially_inside_verify_on_each_nodes_target_and_delete_inside_release() {
    let ctx = ctx_with(&[TargetConfig::new("dsp1"), TargetConfig::new("dsp2")]);
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let inside = Arc::new(AtomicUsize::new(0));
    let (l1, l2, i1) = (log.clone(), log.clone(), inside.clone());
    let k = kernel(&ctx, "t.logged", move |b| {
        b.target(
            "dsp1",
            TargetKernel::new(|p| add(p, 1))
                .create(move |l| {
                    // Sequential: no other create is running.
                    assert_eq!(i1.fetch_add(1, SeqCst), 0, "create calls overlapped");
                    std::thread::sleep(Duration::from_millis(20));
                    l1.lock().unwrap().push(format!("create {} on {}", l.node_name(), thread_name()));
                    i1.fetch_sub(1, SeqCst);
                    Ok(())
                })
                .delete(move |l| {
                    l2.lock().unwrap().push(format!("delete {} on {}", l.node_name(), thread_name()));
                    Ok(())
                }),
        )
        .target("dsp2", TargetKernel::new(|p| add(p, 2)))
    });
    let g = Graph::new(&ctx).unwrap();
    let (a, v, o) = (input(&ctx), Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(), out(&ctx));
    let n1 = g.add_node(&k, [&a, &v]).unwrap();
    n1.set_name("first").unwrap();
    let n2 = g.add_node(&k, [&v, &o]).unwrap();
    n2.set_name("second").unwrap();
    assert_eq!(n1.target().unwrap(), "dsp1", "default: the kernel's first target the context has");
    g.verify().unwrap();
    {
        let seen = log.lock().unwrap();
        assert_eq!(seen.len(), 2, "create ran for both nodes before verify returned: {seen:?}");
        assert!(seen.iter().all(|l| l.starts_with("create") && l.ends_with("dsp1-0")), "{seen:?}");
    }
    g.process().unwrap();
    assert!(o.to_vec::<u8>().unwrap().iter().enumerate().all(|(i, &p)| p == i as u8 + 2), "dsp1's process twice");
    log.lock().unwrap().clear();
    drop(g);
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "delete ran for both nodes inside release: {seen:?}");
    assert!(seen.iter().all(|l| l.starts_with("delete") && l.ends_with("dsp1-0")), "{seen:?}");
}

#[test]
fn a_node_runs_the_implementation_of_its_target_and_an_unknown_or_unsupported_target_is_refused() {
    let ctx = ctx_with(&[TargetConfig::new("dsp"), TargetConfig::new("gpu")]);
    let where_ = Arc::new(Mutex::new(String::new()));
    let (w1, w2) = (where_.clone(), where_.clone());
    let k = kernel(&ctx, "t.two_impls", move |b| {
        b.process(move |p| {
            *w1.lock().unwrap() = thread_name();
            add(p, 10)
        })
        .target(
            "dsp",
            TargetKernel::new(move |p| {
                *w2.lock().unwrap() = thread_name();
                add(p, 20)
            }),
        )
    });
    let g = Graph::new(&ctx).unwrap();
    let (a, o) = (input(&ctx), out(&ctx));
    let n = g.add_node(&k, [&a, &o]).unwrap();
    g.process().unwrap();
    assert_eq!(n.target().unwrap(), HOST_TARGET, "its own process: the host target by default");
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 10);
    n.set_target("dsp").unwrap();
    g.process().unwrap();
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 20, "the dsp implementation");
    assert!(where_.lock().unwrap().ends_with("dsp-0"), "{}", where_.lock().unwrap());
    n.set_target("gpu").unwrap();
    g.process().unwrap();
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 10, "no gpu implementation: the kernel's own process, on gpu");
    assert!(where_.lock().unwrap().ends_with("gpu-0"), "{}", where_.lock().unwrap());

    let e = n.set_target("npu").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParameters);
    assert!(e.to_string().contains("no target 'npu'"), "{e}");

    // A kernel implemented only on dsp: gpu is refused naming its targets; a context without dsp
    // cannot place it at all.
    let only = kernel(&ctx, "t.dsp_only", |b| b.target("dsp", TargetKernel::new(|p| add(p, 1))));
    let g2 = Graph::new(&ctx).unwrap();
    let n2 = g2.add_node(&only, [&a, &o]).unwrap();
    let e = n2.set_target("gpu").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("no implementation on target 'gpu'") && e.to_string().contains("dsp"), "{e}");
    let bare = ctx_with(&[]);
    let only = kernel(&bare, "t.dsp_only", |b| b.target("dsp", TargetKernel::new(|p| add(p, 1))));
    let g3 = Graph::new(&bare).unwrap();
    g3.add_node(&only, [&input(&bare), &out(&bare)]).unwrap();
    let e = g3.verify().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("targets this context does not have"), "{e}");
}

/// The instance context of the control/serialization tests: a gain process adds, control sets.
struct Device {
    gain: u8,
    busy: Arc<AtomicUsize>,
    overlaps: Arc<AtomicUsize>,
}

fn enter(busy: &AtomicUsize, overlaps: &AtomicUsize) {
    if busy.fetch_add(1, SeqCst) != 0 {
        overlaps.fetch_add(1, SeqCst);
    }
}

fn device_kernel(ctx: &Context, target: &str, busy: Arc<AtomicUsize>, overlaps: Arc<AtomicUsize>) -> Kernel {
    kernel(ctx, "t.device", move |b| {
        b.target(
            target,
            TargetKernel::new(|p| {
                let d = p.instance::<Device>()?;
                let (gain, busy, overlaps) = (d.gain, d.busy.clone(), d.overlaps.clone());
                enter(&busy, &overlaps);
                std::thread::sleep(Duration::from_micros(200));
                let r = add(p, gain);
                busy.fetch_sub(1, SeqCst);
                r
            })
            .create(move |l| {
                l.set_instance(Device { gain: 1, busy: busy.clone(), overlaps: overlaps.clone() });
                Ok(())
            })
            .control(|c| {
                let command = c.command();
                let d = c.instance::<Device>()?;
                enter(&d.busy, &d.overlaps);
                std::thread::sleep(Duration::from_micros(200));
                let r = match command {
                    1 => {
                        d.gain = d.gain.wrapping_add(1);
                        Ok(())
                    }
                    _ => Err(Error::new(ErrorKind::NotSupported, format!("unknown command {command}"))),
                };
                d.busy.fetch_sub(1, SeqCst);
                r
            })
            .delete(|l| l.take_instance::<Device>().map(drop)),
        )
    })
}

#[test]
fn control_is_serialized_with_process_and_returns_the_callbacks_status() {
    // Two threads on the target: serialization must come from the node, not from a single thread.
    let ctx = ctx_with(&[TargetConfig::new("dev").threads(2)]);
    let (busy, overlaps) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let k = device_kernel(&ctx, "dev", busy.clone(), overlaps.clone());
    let g = Graph::new(&ctx).unwrap();
    let (a, o) = (input(&ctx), out(&ctx));
    let n = g.add_node(&k, [&a, &o]).unwrap();
    g.verify().unwrap();
    let frames = processing_while(&g, || {
        for _ in 0..100 {
            n.send_command(1, &[], LONG).unwrap();
        }
    });
    assert!(frames > 0);
    assert_eq!(overlaps.load(SeqCst), 0, "a control command overlapped a process call");
    g.process().unwrap();
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 101, "100 commands raised the gain from 1 to 101");
    let e = n.send_command(7, &[], LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "the control callback's status comes back");
    assert!(e.to_string().contains("unknown command 7"), "{e}");
}

#[test]
fn control_is_refused_before_verify_and_after_release() {
    let ctx = ctx_with(&[TargetConfig::new("dev")]);
    let k = device_kernel(&ctx, "dev", Arc::default(), Arc::default());
    let g = Graph::new(&ctx).unwrap();
    let n = g.add_node(&k, [&input(&ctx), &out(&ctx)]).unwrap();
    let e = n.send_command(1, &[], LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("verify the graph first"), "{e}");
    g.verify().unwrap();
    n.send_command(1, &[], LONG).unwrap();
    drop(g);
    assert_eq!(n.send_command(1, &[], LONG).unwrap_err().kind(), ErrorKind::InvalidReference);
}

/// A kernel implemented on target "slow" (process: copy) whose control callback sleeps `sleep`,
/// then answers with `answer`.
fn slow_control_kernel(
    ctx: &Context,
    name: &str,
    sleep: Duration,
    answer: impl Fn(&ControlContext<'_>) -> Result<()> + Send + Sync + 'static,
) -> Kernel {
    kernel(ctx, name, move |b| {
        b.target(
            "slow",
            TargetKernel::new(|p| add(p, 0)).control(move |c| {
                std::thread::sleep(sleep);
                answer(c)
            }),
        )
    })
}

/// Issue 26 (4): any `Duration` is a valid timeout. `ZERO` on a slow command is an immediate
/// `Timeout`; `MAX` and values near the clock's end wait without a deadline (no overflow panic) and
/// return the control callback's result.
#[test]
fn any_timeout_is_accepted_zero_times_out_and_huge_ones_wait_for_the_result() {
    let ctx = ctx_with(&[TargetConfig::new("slow")]);
    let k = slow_control_kernel(&ctx, "t.timeouts", Duration::from_millis(20), |c| {
        if c.command() == 9 { Err(Error::new(ErrorKind::NotSupported, "nine")) } else { Ok(()) }
    });
    let g = Graph::new(&ctx).unwrap();
    let n = g.add_node(&k, [&input(&ctx), &out(&ctx)]).unwrap();
    g.verify().unwrap();
    let e = n.send_command(1, &[], Duration::ZERO).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    for timeout in [
        Duration::MAX,
        Duration::new(u64::MAX, 0),
        Duration::from_secs(u64::MAX / 2),
        Duration::from_secs(u64::MAX / 1_000_000),
        Duration::from_secs(1 << 40),
    ] {
        n.send_command(2, &[], timeout).unwrap();
        assert_eq!(n.send_command(9, &[], timeout).unwrap_err().kind(), ErrorKind::NotSupported, "{timeout:?}");
    }
}

#[test]
fn a_command_that_outlasts_its_timeout_returns_timeout_naming_node_and_target() {
    let ctx = ctx_with(&[TargetConfig::new("slow")]);
    // The command takes 1.5 s: a return before that is the timeout's, even on a loaded machine
    // that wakes the caller late.
    let k = slow_control_kernel(&ctx, "t.slow_control", Duration::from_millis(1500), |_| Ok(()));
    let g = Graph::new(&ctx).unwrap();
    let n = g.add_node(&k, [&input(&ctx), &out(&ctx)]).unwrap();
    n.set_name("sleepy").unwrap();
    g.verify().unwrap();
    let t0 = Instant::now();
    let e = n.send_command(3, &[], Duration::from_millis(50)).unwrap_err();
    let waited = t0.elapsed();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().contains("node 'sleepy' on target 'slow'"), "{e}");
    assert!(waited >= Duration::from_millis(50) && waited < Duration::from_millis(1200), "{waited:?}");
    assert!(n.command_timed_out().unwrap());
    // The target finishes the command, then processes: the context stays usable.
    g.process().unwrap();
    n.send_command(3, &[], LONG).unwrap();
}

#[test]
fn a_command_that_would_wait_for_itself_is_refused_and_a_full_queue_is_an_error() {
    let ctx = ctx_with(&[TargetConfig::new("t").queue_depth(1)]);
    let other: Arc<Mutex<Option<Node>>> = Arc::default();
    let seen = other.clone();
    let gate = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (g2, s2) = (gate.clone(), started.clone());
    let k = kernel(&ctx, "t.sender", move |b| {
        b.target(
            "t",
            TargetKernel::new(|p| add(p, 0)).control(move |c| match c.command() {
                // From a control callback on target t, to a node on t: it would queue behind itself.
                1 => seen.lock().unwrap().as_ref().unwrap().send_command(2, &[], LONG),
                // Hold the target until released.
                9 => {
                    s2.store(true, SeqCst);
                    while !g2.load(SeqCst) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Ok(())
                }
                _ => Ok(()),
            }),
        )
    });
    let g = Graph::new(&ctx).unwrap();
    let a = input(&ctx);
    let n1 = g.add_node(&k, [&a, &out(&ctx)]).unwrap();
    let n2 = g.add_node(&k, [&a, &out(&ctx)]).unwrap();
    *other.lock().unwrap() = Some(n2.clone());
    g.verify().unwrap();
    let e = n1.send_command(1, &[], LONG).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert!(e.to_string().contains("would wait for itself"), "{e}");

    // The target busy with one command, its queue (depth 1) holding another: a third is refused.
    std::thread::scope(|s| {
        s.spawn(|| n1.send_command(9, &[], LONG).unwrap());
        while !started.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let queued = s.spawn(|| n2.send_command(0, &[], LONG));
        while ctx.targets()[0].queued == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let e = n2.send_command(0, &[], LONG).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NoResources);
        assert!(e.to_string().contains("queue of target 't' is full"), "{e}");
        gate.store(true, SeqCst);
        queued.join().unwrap().unwrap();
    });
    g.process().unwrap();
}

#[test]
fn a_panicking_target_callback_is_an_error_and_the_target_keeps_working() {
    vx_plugin_abi::expect_panics("the device fell over");
    let ctx = ctx_with(&[TargetConfig::new("t")]);
    let fail = Arc::new(AtomicBool::new(true));
    let f = fail.clone();
    let k = kernel(&ctx, "t.panics", move |b| {
        b.target(
            "t",
            TargetKernel::new(move |p| {
                if f.load(SeqCst) {
                    panic!("the device fell over");
                }
                add(p, 5)
            }),
        )
    });
    let g = Graph::new(&ctx).unwrap();
    let o = out(&ctx);
    g.add_node(&k, [&input(&ctx), &o]).unwrap().set_name("dev").unwrap();
    let e = g.process().unwrap_err();
    assert!(e.to_string().contains("the device fell over"), "{e}");
    assert_eq!(e.context().node.as_deref(), Some("dev"));
    fail.store(false, SeqCst);
    g.process().unwrap();
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 5);
}

#[test]
fn a_three_stage_graph_on_three_targets_matches_the_host() {
    let ctx = ctx_with(&[TargetConfig::new("a"), TargetConfig::new("b"), TargetConfig::new("c")]);
    let k = kernel(&ctx, "t.plus3", |b| b.process(|p| add(p, 3)));
    let run = |targets: [&str; 3]| {
        let g = Graph::new(&ctx).unwrap();
        let a = input(&ctx);
        let (v1, v2) = (
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
            Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap(),
        );
        let o = out(&ctx);
        for ((i, x), t) in [(&a, &v1), (&v1, &v2), (&v2, &o)].into_iter().zip(targets) {
            g.add_node(&k, [i, x]).unwrap().set_target(t).unwrap();
        }
        g.process().unwrap();
        o.to_vec::<u8>().unwrap()
    };
    let host = run([HOST_TARGET; 3]);
    assert_eq!(host[1], 10);
    assert_eq!(run(["a", "b", "c"]), host);
    assert!(ctx.targets().iter().all(|t| t.jobs_run >= 2), "{:?}", ctx.targets());
}

#[test]
fn schedule_and_wait_and_completion_callbacks() {
    let ctx = ctx_with(&[TargetConfig::new("t")]);
    let k = kernel(&ctx, "t.plus1", |b| b.process(|p| add(p, 1)));
    let g = Graph::new(&ctx).unwrap();
    let (a, o) = (input(&ctx), out(&ctx));
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let n1 = g.add_node(&k, [&a, &v]).unwrap();
    let n2 = g.add_node(&k, [&v, &o]).unwrap();
    n2.set_target("t").unwrap();
    let completions: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let c = completions.clone();
    n2.set_callback(Some(move |d: &NodeCompletion<'_>| {
        c.lock().unwrap().push((d.node.to_owned(), d.target.to_owned()));
        NodeAction::Continue
    }))
    .unwrap();
    assert_eq!(g.wait().unwrap_err().kind(), ErrorKind::Failure, "nothing scheduled");
    g.schedule().unwrap();
    assert_eq!(g.schedule().unwrap_err().kind(), ErrorKind::GraphScheduled);
    g.wait().unwrap();
    assert_eq!(o.to_vec::<u8>().unwrap()[0], 2);
    assert_eq!(*completions.lock().unwrap(), [(n2.name().unwrap(), "t".to_owned())]);

    let abandon = Arc::new(AtomicI32::new(0));
    let ab = abandon.clone();
    n1.set_callback(Some(move |_: &NodeCompletion<'_>| {
        ab.fetch_add(1, SeqCst);
        NodeAction::Abandon
    }))
    .unwrap();
    g.schedule().unwrap();
    let e = g.wait().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::GraphAbandoned);
    assert_eq!(abandon.load(SeqCst), 1);
    assert_eq!(completions.lock().unwrap().len(), 1, "the frame stopped before the second node");
    assert_eq!(g.state().unwrap(), GraphState::Abandoned);
    n1.set_callback(None::<fn(&NodeCompletion<'_>) -> NodeAction>).unwrap();
    g.process().unwrap();
}

/// Issue 26 (5): the graph's state, perf and its nodes' status and perf are readable from a
/// completion callback, and the state reads `Running` there — in `process`, a scheduled run and a
/// pipelined frame; outside, the state of the last run.
#[test]
fn state_status_and_perf_are_readable_from_a_callback_and_the_graph_reads_running() {
    let ctx = ctx_with(&[TargetConfig::new("t")]);
    let k = kernel(&ctx, "t.add1_cb", |b| b.process(|p| add(p, 1)).target("t", TargetKernel::new(|p| add(p, 1))));
    let g = Graph::new(&ctx).unwrap();
    let (a, o) = (input(&ctx), out(&ctx));
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let n1 = g.add_node(&k, [&a, &v]).unwrap();
    let n2 = g.add_node(&k, [&v, &o]).unwrap();
    n2.set_target("t").unwrap();
    // The callback reaches the graph through a slot emptied at the end (a graph handle inside its
    // own callback would keep the graph alive).
    let graph: Arc<Mutex<Option<Graph>>> = Arc::new(Mutex::new(Some(g.clone())));
    type Seen = (Result<GraphState>, Result<Status>, Result<u64>, Result<Perf>, Result<Status>);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (gs, s, n1c, n2c) = (graph.clone(), seen.clone(), n1.clone(), n2.clone());
    n2.set_callback(Some(move |_: &NodeCompletion<'_>| {
        let g = gs.lock().unwrap().clone().unwrap();
        s.lock().unwrap().push((g.state(), n1c.status(), n1c.perf().map(|p| p.num), g.perf(), n2c.status()));
        NodeAction::Continue
    }))
    .unwrap();
    g.process().unwrap();
    g.schedule().unwrap();
    g.wait().unwrap();
    assert_eq!(g.state().unwrap(), GraphState::Completed);
    let p_in = g.add_parameter(&n1, 0).unwrap();
    g.set_schedule_config(ScheduleConfig::queue_auto().queue(p_in, [a.clone()])).unwrap();
    g.enqueue(p_in, &a).unwrap();
    g.dequeue(p_in).unwrap().result.unwrap();
    g.wait().unwrap();
    assert_eq!(g.state().unwrap(), GraphState::Completed);
    graph.lock().unwrap().take();
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.len(), 3, "one completion per run");
    for (i, (state, s1, num, gperf, s2)) in seen.into_iter().enumerate() {
        assert_eq!(state.unwrap(), GraphState::Running, "run {i}");
        assert_eq!(s1.unwrap(), Status::Success, "run {i}");
        assert_eq!(num.unwrap(), i as u64 + 1, "run {i}: node 1 ran before node 2");
        assert_eq!(gperf.unwrap().num, i.min(2) as u64, "run {i}: the graph's perf counts completed runs");
        assert_eq!(s2.unwrap(), Status::Success, "run {i}");
    }
    assert_eq!(n1.perf().unwrap().num, 3);
}

/// Issue 26 (7): `VX_TARGET_ANY` and case-insensitive target names.
#[test]
fn target_names_are_case_insensitive_and_any_chooses_a_target_that_implements_the_kernel() {
    let ctx = ctx_with(&[TargetConfig::new("Dsp1")]);
    // Only a target implementation: "any" finds it; the host cannot run it.
    let only_dsp = kernel(&ctx, "t.only_dsp", |b| b.target("DSP1", TargetKernel::new(|p| add(p, 3))));
    let g = Graph::new(&ctx).unwrap();
    let o = out(&ctx);
    let n = g.add_node(&only_dsp, [&input(&ctx), &o]).unwrap();
    for any in ["any", "ANY", "Any", TARGET_ANY] {
        n.set_target(any).unwrap();
        g.process().unwrap();
        assert_eq!(n.target().unwrap(), "Dsp1", "{any}: placed on the target that implements it");
        assert_eq!(o.to_vec::<u8>().unwrap()[..2], [3, 4], "the DSP1 implementation ran");
    }
    for name in ["dsp1", "DSP1", "dSp1"] {
        n.set_target(name).unwrap();
        g.process().unwrap();
        assert_eq!(n.target().unwrap(), "Dsp1", "{name}");
    }
    assert_eq!(n.set_target("HOST").unwrap_err().kind(), ErrorKind::NotSupported, "no host implementation");
    assert_eq!(n.set_target("dsp2").unwrap_err().kind(), ErrorKind::InvalidParameters);
    // A kernel with its own process: "any" runs it on the host; "Host" is the host target.
    let own = kernel(&ctx, "t.own", |b| b.process(|p| add(p, 1)));
    let n2 = g.add_node(&own, [&input(&ctx), &out(&ctx)]).unwrap();
    n2.set_target("Any").unwrap();
    g.process().unwrap();
    assert_eq!(n2.target().unwrap(), HOST_TARGET);
    n2.set_target("Host").unwrap();
    n2.set_target("DSP1").unwrap();
    g.process().unwrap();
    assert_eq!(n2.target().unwrap(), "Dsp1");
    // Names that differ only by case, and "any" or "host" in any case, cannot be configured.
    let twice = Context::builder().target(TargetConfig::new("gpu")).target(TargetConfig::new("GPU")).build();
    assert_eq!(twice.unwrap_err().kind(), ErrorKind::InvalidValue);
    for reserved in ["ANY", "any", "Host"] {
        let e = Context::builder().target(TargetConfig::new(reserved)).build().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue, "{reserved}");
    }
}

/// A fusable U8 copy tiling kernel (flexible) that takes commands: each command's control
/// callback records whether a tile was running then (`busy` is 1 while a tile runs).
fn commanded_copy_kernel(ctx: &Context, name: &str, busy: Arc<AtomicUsize>, overlaps: Arc<AtomicUsize>) -> Kernel {
    let in_tile = busy.clone();
    let k = common::u8_tiling_builder(ctx, name)
        .flexible(move |args| {
            in_tile.fetch_add(1, SeqCst);
            std::thread::sleep(Duration::from_millis(2));
            let r = common::copy_tile(args);
            in_tile.fetch_sub(1, SeqCst);
            r
        })
        .fusable()
        .control(move |_| {
            if busy.load(SeqCst) != 0 {
                overlaps.fetch_add(1, SeqCst);
            }
            Ok(())
        })
        .add()
        .unwrap();
    common::image_in_out(&k);
    k.finalize().unwrap();
    k
}

#[test]
fn a_command_to_a_tiling_node_waits_for_the_nodes_run() {
    // A tiling node has no run state of its own, but one that takes commands is serialized with
    // them all the same: a command sent while its tiles run waits for the run to end.
    let ctx = Context::builder().threads(2).build().unwrap();
    let (busy, overlaps) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let k = commanded_copy_kernel(&ctx, "test.commanded_copy", busy.clone(), overlaps.clone());
    let g = Graph::new(&ctx).unwrap();
    let (a, o) = (input(&ctx), out(&ctx));
    let n = g.add_node(&k, [&a, &o]).unwrap();
    g.verify().unwrap();
    let frames = processing_while(&g, || {
        for _ in 0..50 {
            // Sent while a tile runs (it sleeps 2 ms): without the node's lock the command runs
            // beside it.
            let t = Instant::now();
            while busy.load(SeqCst) == 0 {
                assert!(t.elapsed() < LONG, "no tile ran within {LONG:?}");
                std::hint::spin_loop();
            }
            n.send_command(1, &[], LONG).unwrap();
        }
    });
    assert!(frames > 0);
    assert_eq!(overlaps.load(SeqCst), 0, "a command ran while the node's tiles ran");
}

#[test]
fn a_tiling_node_that_takes_commands_is_not_fused() {
    // A command waits for its node's run; inside a fused group that run would be the group's.
    let ctx = Context::builder().threads(1).build().unwrap();
    let k = commanded_copy_kernel(
        &ctx,
        "test.commanded_copy",
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let plain = common::u8_tiling_builder(&ctx, "test.plain_copy").flexible(common::copy_tile).fusable().add().unwrap();
    common::image_in_out(&plain);
    plain.finalize().unwrap();
    for (first, fused) in [(&k, false), (&plain, true)] {
        let g = Graph::new(&ctx).unwrap();
        let (a, o) = (input(&ctx), out(&ctx));
        let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
        g.add_node(first, [&a, &v]).unwrap().set_name("first").unwrap();
        g.add_node(&plain, [&v, &o]).unwrap().set_name("second").unwrap();
        g.process().unwrap();
        assert_eq!(o.to_vec::<u8>().unwrap(), a.to_vec::<u8>().unwrap());
        let report = g.fusion_report().unwrap();
        assert_eq!(report.groups.len(), usize::from(fused), "{report}");
        if !fused {
            let why: Vec<(&str, FusionRefusal)> = report.unfused.iter().map(|u| (u.node.as_str(), u.reason)).collect();
            assert_eq!(why, [("first", FusionRefusal::TakesCommands), ("second", FusionRefusal::NothingToFuseWith)]);
            assert!(report.to_string().contains("takes commands"), "{report}");
        }
    }
}
