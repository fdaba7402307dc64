//! Execution: dependency order, failures and panics reported with graph/node/kernel, graphs on
//! different threads processing concurrently, independent nodes of one graph running concurrently,
//! re-entrancy refused, timing recorded.

mod common;

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use vx::*;

/// A kernel `image in → image out` that runs `body` (then copies input to output).
fn kernel_with(ctx: &Context, name: &str, body: impl Fn() -> Result<()> + Send + Sync + 'static) -> Kernel {
    let k = ctx
        .user_kernel(name, ctx.allocate_user_kernel_id().unwrap(), 2)
        .validate(|v, metas| {
            let i = v.image(0)?;
            metas.get(1)?.set_from_reference(&Reference::from(i))?;
            Ok(())
        })
        .process(move |p| {
            body()?;
            let (i, mut o) = p.map_pair::<u8, u8>(0, 1)?;
            for y in 0..i.height() {
                o.row_mut(y).copy_from_slice(i.row(y));
            }
            Ok(())
        })
        .add()
        .unwrap();
    image_in_out(&k);
    k.finalize().unwrap();
    k
}

/// Both callers must be inside at the same time, or this times out and returns false.
fn rendezvous(count: &AtomicU32, parties: u32) -> bool {
    count.fetch_add(1, SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count.load(SeqCst) < parties {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn nodes_run_in_dependency_order_whatever_the_creation_order() {
    let ctx = ctx();
    let log = Arc::new(Mutex::new(Vec::new()));
    let (l1, l2, l3) = (log.clone(), log.clone(), log.clone());
    let k1 = kernel_with(&ctx, "test.a", move || {
        l1.lock().unwrap().push("a");
        Ok(())
    });
    let k2 = kernel_with(&ctx, "test.b", move || {
        l2.lock().unwrap().push("b");
        Ok(())
    });
    let k3 = kernel_with(&ctx, "test.c", move || {
        l3.lock().unwrap().push("c");
        Ok(())
    });
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 3, 3, |x, y| (x * y) as u8);
    let v1 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let v2 = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 3, 3, ImageFormat::U8).unwrap();
    // Created last-first.
    g.add_node(&k3, [&v2, &dst]).unwrap();
    g.add_node(&k2, [&v1, &v2]).unwrap();
    g.add_node(&k1, [&src, &v1]).unwrap();
    g.process().unwrap();
    g.process().unwrap();
    assert_eq!(*log.lock().unwrap(), ["a", "b", "c", "a", "b", "c"]);
    assert_eq!(dst.to_vec::<u8>().unwrap(), src.to_vec::<u8>().unwrap());
    assert_eq!(g.perf().unwrap().num, 2);
    for (_, _, perf) in g.node_perf().unwrap() {
        assert_eq!(perf.num, 2);
        assert!(perf.min <= perf.avg() && perf.avg() <= perf.max);
    }
}

#[test]
fn a_failing_kernel_stops_the_run_and_is_named() {
    let ctx = ctx();
    let ran_after = Arc::new(AtomicU32::new(0));
    let ra = ran_after.clone();
    let bad = kernel_with(&ctx, "test.bad", || Err(Error::new(ErrorKind::InvalidValue, "threshold out of range")));
    let after = kernel_with(&ctx, "test.after", move || {
        ra.fetch_add(1, SeqCst);
        Ok(())
    });
    let g = Graph::with_name(&ctx, "pipeline").unwrap();
    let src = u8_image(&ctx, 2, 2, |_, _| 0);
    let v = Image::new_virtual(&g, 0, 0, ImageFormat::Virtual).unwrap();
    let dst = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    let n = g.add_node(&bad, [&src, &v]).unwrap();
    g.add_node(&after, [&v, &dst]).unwrap();
    let e = g.process().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(
        e.to_string(),
        "graph 'pipeline', node 'bad#0' (kernel 'test.bad'): threshold out of range [VX_ERROR_INVALID_VALUE (-16)]"
    );
    assert_eq!(ran_after.load(SeqCst), 0, "nodes after the failure do not run");
    assert_eq!(n.status().unwrap(), Status::InvalidValue);
    assert_eq!(g.state().unwrap(), GraphState::Abandoned);
}

#[test]
fn a_panicking_kernel_is_an_error_and_the_next_process_works() {
    vx_plugin_abi::expect_panics("first frame is cursed");
    let ctx = ctx();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let k = kernel_with(&ctx, "test.flaky", move || {
        if c.fetch_add(1, SeqCst) == 0 {
            panic!("first frame is cursed");
        }
        Ok(())
    });
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 2, 2, |_, _| 9);
    let dst = Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    let e = g.process().unwrap_err();
    assert_eq!(e.status(), Status::Failure);
    assert!(e.to_string().contains("panicked: first frame is cursed"), "{e}");
    assert!(e.to_string().contains("kernel 'test.flaky'"), "{e}");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), vec![9; 4]);
}

#[test]
fn graphs_on_different_threads_process_concurrently() {
    let ctx = ctx();
    let inside = Arc::new(AtomicU32::new(0));
    let met = Arc::new(AtomicU32::new(0));
    let (i, m) = (inside.clone(), met.clone());
    let k = kernel_with(&ctx, "test.meet", move || {
        if rendezvous(&i, 2) {
            m.fetch_add(1, SeqCst);
        }
        Ok(())
    });
    let graphs: Vec<(Graph, Image)> = (0..2)
        .map(|n| {
            let g = Graph::new(&ctx).unwrap();
            let src = u8_image(&ctx, 4, 4, move |_, _| n);
            let dst = Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap();
            g.add_node(&k, [&src, &dst]).unwrap();
            g.verify().unwrap();
            (g, dst)
        })
        .collect();
    std::thread::scope(|s| {
        for (g, _) in &graphs {
            s.spawn(move || g.process().unwrap());
        }
    });
    assert_eq!(met.load(SeqCst), 2, "both kernels were inside process at the same time");
    assert_eq!(graphs[1].1.to_vec::<u8>().unwrap(), vec![1; 16]);
}

#[test]
fn independent_nodes_of_one_graph_run_concurrently_on_the_caller_and_the_context_crew() {
    let ctx = ctx(); // 2 threads
    let inside = Arc::new(AtomicU32::new(0));
    let met = Arc::new(AtomicU32::new(0));
    let threads = Arc::new(Mutex::new(Vec::new()));
    let (i, m, t) = (inside.clone(), met.clone(), threads.clone());
    let k = kernel_with(&ctx, "test.meet", move || {
        t.lock().unwrap().push(std::thread::current().name().unwrap_or("").to_string());
        if rendezvous(&i, 2) {
            m.fetch_add(1, SeqCst);
        }
        Ok(())
    });
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 4, 4, |_, _| 5);
    let (a, b) = (Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap(), Image::new(&ctx, 4, 4, ImageFormat::U8).unwrap());
    g.add_node(&k, [&src, &a]).unwrap();
    g.add_node(&k, [&src, &b]).unwrap();
    g.process().unwrap();
    assert_eq!(met.load(SeqCst), 2, "the two nodes ran at the same time");
    // The calling thread takes a node too; the other runs on one of the context's helper threads.
    let names = threads.lock().unwrap();
    assert!(names.iter().any(|n| n.starts_with("vx-ctx") && n.contains("-worker")), "{names:?}");
    assert_eq!(b.to_vec::<u8>().unwrap(), vec![5; 16]);
}

#[test]
fn a_callback_cannot_reenter_its_own_graph_on_any_thread() {
    let ctx = ctx();
    let slot: Arc<Mutex<Option<Graph>>> = Arc::default();
    let seen: Arc<Mutex<Vec<ErrorKind>>> = Arc::default();
    let (s2, seen2) = (slot.clone(), seen.clone());
    let k = kernel_with(&ctx, "test.reenter", move || {
        if let Some(g) = s2.lock().unwrap().as_ref() {
            let mut seen = seen2.lock().unwrap();
            seen.push(g.process().unwrap_err().kind());
            seen.push(g.num_nodes().unwrap_err().kind());
            // The state is not refused: it reads `Running` (issue 26).
            assert_eq!(g.state().unwrap(), GraphState::Running);
        }
        Ok(())
    });
    // Two independent nodes: one level, run on the context's pool workers.
    let g = Graph::new(&ctx).unwrap();
    let src = u8_image(&ctx, 2, 2, |_, _| 1);
    let (a, b) = (Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap(), Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap());
    let node = g.add_node(&k, [&src, &a]).unwrap();
    g.add_node(&k, [&src, &b]).unwrap();
    *slot.lock().unwrap() = Some(g.clone());
    g.process().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![ErrorKind::NotSupported; 4], "refused, not deadlocked");
    // The node handle is refused from inside too; outside, everything works again.
    slot.lock().unwrap().take();
    assert_eq!(g.state().unwrap(), GraphState::Completed);
    assert_eq!(node.status().unwrap(), Status::Success);
}

#[test]
fn a_tile_function_on_a_pool_worker_cannot_reenter_its_graph() {
    let ctx = parallel_tiling_ctx();
    let slot: Arc<Mutex<Option<Graph>>> = Arc::default();
    let seen: Arc<Mutex<Vec<(bool, ErrorKind)>>> = Arc::default();
    let (s2, seen2) = (slot.clone(), seen.clone());
    let k = tiling_kernel_with(&ctx, "t.reenter", move |_| {
        if let Some(g) = s2.lock().unwrap().as_ref() {
            let on_worker = std::thread::current().name().is_some_and(|n| n.starts_with("vx-ctx"));
            let kind = g.process().unwrap_err().kind();
            seen2.lock().unwrap().push((on_worker, kind));
        }
        // Slow enough that the pool worker wakes and takes tiles too.
        std::thread::sleep(Duration::from_millis(2));
        Ok(())
    });
    k.finalize().unwrap();
    let g = Graph::new(&ctx).unwrap();
    let (a, b) =
        (Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap(), Image::new(&ctx, 64, 64, ImageFormat::U8).unwrap());
    g.add_node(&k, [&a, &b]).unwrap();
    *slot.lock().unwrap() = Some(g.clone());
    // Before the fix a worker's call blocked on the graph's lock held by the caller, forever.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let g2 = g.clone();
    std::thread::spawn(move || done_tx.send(g2.process()).unwrap());
    let result = done_rx.recv_timeout(Duration::from_secs(60)).expect("process returned (no deadlock)");
    result.unwrap();
    slot.lock().unwrap().take();
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|(_, k)| *k == ErrorKind::NotSupported), "{seen:?}");
    assert!(seen.iter().any(|(worker, _)| *worker), "a pool worker ran a tile and was refused too: {seen:?}");
}

#[test]
fn two_graphs_whose_kernels_process_each_other_do_not_deadlock() {
    let ctx = ctx();
    let others: Arc<Mutex<[Option<Graph>; 2]>> = Arc::default();
    let inside = Arc::new(AtomicU32::new(0));
    let outcomes: Arc<Mutex<Vec<std::result::Result<(), ErrorKind>>>> = Arc::default();
    let mut kernels = Vec::new();
    for i in 0..2 {
        let (others, inside, outcomes) = (others.clone(), inside.clone(), outcomes.clone());
        kernels.push(kernel_with(&ctx, &format!("test.cross{i}"), move || {
            let other = others.lock().unwrap()[1 - i].clone();
            if let Some(other) = other {
                // Both kernels are running (each holds its own graph) before either asks for the other.
                assert!(rendezvous(&inside, 2), "both graphs run at once");
                let outcome = other.process().map_err(|e| e.kind());
                outcomes.lock().unwrap().push(outcome);
            }
            Ok(())
        }));
    }
    let graphs: Vec<Graph> = (0..2)
        .map(|i| {
            let g = Graph::with_name(&ctx, &format!("g{i}")).unwrap();
            let src = u8_image(&ctx, 2, 2, |_, _| 1);
            g.add_node(&kernels[i], [&src, &Image::new(&ctx, 2, 2, ImageFormat::U8).unwrap()]).unwrap();
            g.verify().unwrap();
            g
        })
        .collect();
    *others.lock().unwrap() = [Some(graphs[0].clone()), Some(graphs[1].clone())];
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    for g in &graphs {
        let (g, done_tx) = (g.clone(), done_tx.clone());
        std::thread::spawn(move || done_tx.send(g.process()).unwrap());
    }
    for _ in 0..2 {
        done_rx.recv_timeout(Duration::from_secs(60)).expect("both processes return (no deadlock)").unwrap();
    }
    others.lock().unwrap().iter_mut().for_each(|g| *g = None);
    // Whichever way the threads interleave, every call returned: a graph busy on the other thread
    // (or held further up this thread's own stack) is refused with NotSupported, not waited for;
    // a free one is processed (nested), and its kernel then meets the first case.
    let outcomes = outcomes.lock().unwrap();
    assert!(outcomes.len() >= 2, "{outcomes:?}");
    assert!(outcomes.contains(&Err(ErrorKind::NotSupported)), "{outcomes:?}");
    assert!(outcomes.iter().all(|o| matches!(o, Ok(()) | Err(ErrorKind::NotSupported))), "{outcomes:?}");
}
