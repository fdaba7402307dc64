//! Reloading modules: swap to a new build in place, graphs pick up the new code at their next
//! process, a failed reload leaves the old version serving, plugin directories load what they can,
//! and a graph keeps processing while the module is reloaded 200 times.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx::*;
use vx_tests::{build_module, plugin_dir, testmod};

fn install(dir: &Path, name: &str, lib: &Path) {
    // Write next to it and rename: the loader never sees a half-written file.
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::copy(lib, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join(format!("lib{name}.so"))).unwrap();
}

fn invert_graph(ctx: &Context, pixels: &[u8]) -> (Graph, Image) {
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(ctx).unwrap();
    let w = pixels.len() as u32;
    let src = Image::new(ctx, w, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(w, 1), 0, pixels).unwrap();
    let dst = Image::new(ctx, w, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    (g, dst)
}

#[test]
fn reload_swaps_kernels_and_graphs_pick_up_the_new_code() {
    let (v1, v2) = (testmod("testmod_reload", &[]), testmod("testmod_reload", &["v2"]));
    let dir = plugin_dir("reload", &[("testmod_reload", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_reload").unwrap();
    let (g, dst) = invert_graph(&ctx, &[0, 100]);
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);

    install(&dir, "testmod_reload", &v2);
    ctx.reload_module("testmod_reload").unwrap();
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    assert_eq!((ctx.unique_kernel_count(), ctx.module_count()), (4, 1), "swapped, not added");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 156], "version 2 inverts and adds one");
    assert_eq!(g.reloads().unwrap(), 1);
    // The old version was used only by the node, which now runs the new one: it is gone.
    assert_eq!(ctx.module_history("testmod_reload"), [("1.0.0".to_string(), ModuleState::Unloaded)]);

    // A reload that fails keeps the running version.
    install(&dir, "testmod_reload", &testmod("testmod_reload", &["publish-fails"]));
    let e = ctx.reload_module("testmod_reload").unwrap_err();
    assert!(
        e.message().starts_with("reloading module 'testmod_reload' failed, the loaded version keeps serving"),
        "{e}"
    );
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [0, 156]);
    assert_eq!(ctx.unique_kernel_count(), 4);

    ctx.unload_module("testmod_reload").unwrap();
    assert!(ctx.kernel_by_name("testmod.invert").is_err());
    g.process().unwrap(); // still the v2 node, still mapped
    drop(g);
    assert_eq!(ctx.module_state("testmod_reload"), Some(ModuleState::Unloaded));
}

#[test]
fn a_plugin_directory_loads_what_it_can() {
    let dir = plugin_dir(
        "dirload",
        &[("testmod_dir", &testmod("testmod_dir", &[])), ("noentry_dir", &build_module("vx-noentry", &[]))],
    );
    std::fs::write(dir.join("libjunk_dir.so"), b"not a library").unwrap();
    std::fs::write(dir.join("README.txt"), b"ignored").unwrap();
    let ctx = Context::new().unwrap();
    let results = ctx.load_module_dir(&dir).unwrap();
    let summary: Vec<(&str, Option<ErrorKind>)> =
        results.iter().map(|(n, r)| (n.as_str(), r.as_ref().err().map(|e| e.kind()))).collect();
    assert_eq!(
        summary,
        [
            ("junk_dir", Some(ErrorKind::InvalidModule)),
            ("noentry_dir", Some(ErrorKind::InvalidModule)),
            ("testmod_dir", None)
        ]
    );
    assert_eq!(ctx.module_count(), 1);
    assert!(ctx.kernel_by_name("testmod.invert").is_ok());
    assert_eq!(ctx.load_module_dir("/nonexistent/plugins").unwrap_err().kind(), ErrorKind::InvalidParameters);
}

#[test]
fn reload_under_load() {
    const RELOADS: usize = 200;
    let (v1, v2) = (testmod("testmod_load", &[]), testmod("testmod_load", &["v2"]));
    let dir = plugin_dir("underload", &[("testmod_load", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_load").unwrap();
    let pixels: Vec<u8> = (0..=255).collect();
    let (g, dst) = invert_graph(&ctx, &pixels);
    let want_v1: Vec<u8> = pixels.iter().map(|p| 255 - p).collect();
    let want_v2: Vec<u8> = pixels.iter().map(|p| (255 - p).wrapping_add(1)).collect();

    let stop = Arc::new(AtomicBool::new(false));
    let pauses = Arc::new(Mutex::new(Vec::new()));
    /// Stops the worker however the reloading side leaves (a failed assertion must not hang).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let (frames, mismatches) = std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let (mut frames, mut bad, mut reloads) = (0usize, 0usize, 0u64);
            while !stop.load(Ordering::Acquire) {
                let t = Instant::now();
                g.process().unwrap();
                let dt = t.elapsed();
                let r = g.reloads().unwrap();
                if r != reloads {
                    pauses.lock().unwrap().push(dt);
                    reloads = r;
                }
                let out = dst.to_vec::<u8>().unwrap();
                if out != want_v1 && out != want_v2 {
                    bad += 1;
                }
                frames += 1;
            }
            (frames, bad)
        });
        let _stop = StopOnDrop(&stop);
        for i in 0..RELOADS {
            install(&dir, "testmod_load", if i % 2 == 0 { &v2 } else { &v1 });
            ctx.reload_module("testmod_load").unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
        drop(_stop);
        worker.join().unwrap()
    });
    assert_eq!(mismatches, 0, "every output is exactly one version's");
    assert!(frames > RELOADS / 2, "the graph kept processing ({frames} frames)");

    let mut p = pauses.lock().unwrap().clone();
    p.sort();
    let median = p.get(p.len() / 2).copied().unwrap_or_default();
    let max = p.last().copied().unwrap_or_default();
    eprintln!(
        "reload under load: {RELOADS} reloads, {frames} frames, {} frames rebound; reload pause median {median:?}, max {max:?}",
        p.len()
    );

    // At the end at most two shadow copies are mapped (the loaded one and, perhaps, the one the last
    // frame still used), or every extra one is a zombie the loader named.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut mapped: Vec<&str> =
        maps.lines().filter_map(|l| l.split_whitespace().nth(5)).filter(|p| p.contains("libtestmod_load.")).collect();
    mapped.sort();
    mapped.dedup();
    let zombies: Vec<(String, ModuleState)> = ctx
        .module_history("testmod_load")
        .into_iter()
        .filter(|(_, s)| matches!(s, ModuleState::Zombie { .. }))
        .collect();
    assert!(
        mapped.len() <= 2 + zombies.len(),
        "{} shadow copies mapped: {mapped:?}; zombies: {zombies:?}",
        mapped.len()
    );
    for (v, z) in &zombies {
        eprintln!("zombie version {v}: {z}");
    }
}

#[test]
fn a_reloaded_kernel_keeps_its_enumeration_and_ids_return_to_the_pool() {
    let lib = build_module("vx-hello", &[]);
    let dir = plugin_dir("ids", &[("vx_hello", &lib)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    assert_eq!(ctx.user_kernel_ids_in_use(), 0);
    ctx.load_module("vx_hello").unwrap();
    let e = ctx.kernel_by_name("hello.brighten").unwrap().enumeration();
    assert_eq!(e, kernel_base(VX_ID_USER, 0), "the first id of the pool");
    for _ in 0..5 {
        ctx.reload_module("vx_hello").unwrap();
        assert_eq!(ctx.kernel_by_name("hello.brighten").unwrap().enumeration(), e, "clients find it by enum");
        assert_eq!(ctx.kernel_by_enum(e).unwrap().name(), "hello.brighten");
        assert_eq!(ctx.user_kernel_ids_in_use(), 1, "no id taken per reload");
    }
    ctx.unload_module("vx_hello").unwrap();
    assert_eq!(ctx.user_kernel_ids_in_use(), 0, "the unloaded module's id is back");
    // Ids the application allocates are its own; a module loaded next takes the lowest free one.
    let mine = ctx.allocate_user_kernel_id().unwrap();
    assert_eq!(mine, e);
    ctx.load_module("vx_hello").unwrap();
    assert_eq!(ctx.kernel_by_name("hello.brighten").unwrap().enumeration(), e + 1);
    assert_eq!(ctx.user_kernel_ids_in_use(), 2);
}

#[test]
fn a_handle_looked_up_before_a_reload_follows_it() {
    let (v1, v2) = (testmod("testmod_stale", &[]), testmod("testmod_stale", &["v2"]));
    let dir = plugin_dir("stale", &[("testmod_stale", &v1)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_stale").unwrap();
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    install(&dir, "testmod_stale", &v2);
    ctx.reload_module("testmod_stale").unwrap();
    // The modules chapter's rule (docs/book/src/modules.md: kernel handles follow the reload):
    // look up, (someone reloads), use.
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(1, 1), 0, &[10u8]).unwrap();
    let dst = Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [246], "the node runs version 2 (255 - 10 + 1)");
    drop(g);
    ctx.unload_module("testmod_stale").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let e = g.add_node(&k, [&src, &dst]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidReference);
    assert!(e.message().contains("module was unloaded"), "{e}");
}

#[test]
fn the_history_of_a_module_is_bounded() {
    let (v1, v2) = (testmod("testmod_history", &[]), testmod("testmod_history", &["v2"]));
    let dir = plugin_dir("history", &[("testmod_history", &v1)]);
    let ctx = Context::builder().module_history(3).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_history").unwrap();
    for i in 0..10 {
        install(&dir, "testmod_history", if i % 2 == 0 { &v2 } else { &v1 });
        ctx.reload_module("testmod_history").unwrap();
    }
    let history = ctx.module_history("testmod_history");
    assert_eq!(history.len(), 3, "the newest three: {history:?}");
    assert!(history.iter().all(|(_, s)| *s == ModuleState::Unloaded), "{history:?}");
    assert_eq!(history.last().unwrap().0, "2.0.0", "newest last: {history:?}");
}

#[test]
fn a_module_is_loaded_and_reloaded_under_its_declared_name_only() {
    let other = testmod("testmod_other", &[]);
    let mine = testmod("testmod_mine", &[]);
    let dir = plugin_dir("declared", &[("testmod_renamed", &other), ("testmod_mine", &mine)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let e = ctx.load_module("testmod_renamed").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    assert_eq!(
        e.message(),
        "the file libtestmod_renamed.so holds module 'testmod_other', not 'testmod_renamed': a module's file is \
         lib<its name>.so; load it as 'testmod_other' (or rename the file)"
    );
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
    // A reload over a file that is really another module is refused; the loaded one keeps serving.
    ctx.load_module("testmod_mine").unwrap();
    install(&dir, "testmod_mine", &other);
    let e = ctx.reload_module("testmod_mine").unwrap_err();
    assert!(e.message().contains("holds module 'testmod_other', not 'testmod_mine'"), "{e}");
    assert_eq!(ctx.module_state("testmod_mine"), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    assert!(ctx.kernel_by_name("testmod.invert").is_ok());
}

#[test]
fn loading_one_module_from_many_threads_at_once_counts_the_loads() {
    const THREADS: usize = 8;
    let lib = testmod("testmod_race", &[]);
    let dir = plugin_dir("race", &[("testmod_race", &lib)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let barrier = Arc::new(std::sync::Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let (ctx, barrier) = (ctx.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                ctx.load_module("testmod_race")
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    assert_eq!(ctx.module_state("testmod_race"), Some(ModuleState::Loaded { count: THREADS, version: "1.0.0".into() }));
    assert_eq!((ctx.module_count(), ctx.unique_kernel_count()), (1, 4));
    for _ in 0..THREADS {
        ctx.unload_module("testmod_race").unwrap();
    }
    assert_eq!((ctx.module_count(), ctx.kernel_count()), (0, 0));
}

#[test]
fn nothing_is_left_in_the_temp_directory_and_no_other_directory_is_touched() {
    // A directory named like an old shadow directory of a pid this process cannot see: in a temp
    // directory shared across pid namespaces it may be another process's live one. It is left alone.
    let other = std::env::temp_dir().join("vx-rs-modules-4194304999-ctx1");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("libleftover.1.so"), b"x").unwrap();
    let lib = testmod("testmod_tmp", &[]);
    let dir = plugin_dir("tmp", &[("testmod_tmp", &lib)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_tmp").unwrap();
    assert_eq!(std::fs::read(other.join("libleftover.1.so")).unwrap(), b"x", "another process's directory untouched");
    // Loaded and mapped, yet nothing of it on disk: the copy is an anonymous memory file.
    assert_eq!(loader_temp_entries(), Vec::<String>::new());
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let memfd = format!("/memfd:vx-rs-modules-{}-libtestmod_tmp.", std::process::id());
    assert!(maps.contains(&memfd), "mapped from a memory file");
    ctx.unload_module("testmod_tmp").unwrap();
    assert_eq!(ctx.module_state("testmod_tmp"), Some(ModuleState::Unloaded));
    assert_eq!(copy_fds("testmod_tmp"), 0, "the copy's descriptor is closed with the library");
    let _ = std::fs::remove_dir_all(other);
    let _ = std::fs::remove_dir_all(dir);
}

/// Shadow copies of `module` mapped in this process.
fn mapped_copies(module: &str) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let needle = format!("lib{module}.");
    let mut files: Vec<&str> =
        maps.lines().filter_map(|l| l.split_whitespace().nth(5)).filter(|p| p.contains(&needle)).collect();
    files.sort();
    files.dedup();
    files.len()
}

#[test]
fn an_old_version_held_by_a_handle_or_a_node_keeps_only_itself_alive() {
    // A service keeps a `Kernel` handle and a graph that has not run for a while, and reloads the
    // module many times meanwhile: what they hold is the version they had, not every version since,
    // and the kernel count is the table's, not the number of versions still held.
    let (v1, v2) = (testmod("testmod_lineage", &[]), testmod("testmod_lineage", &["v2"]));
    let dir = plugin_dir("lineage", &[("testmod_lineage", &v1)]);
    let ctx = Context::builder().module_history(2).max_kernels(8).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module("testmod_lineage").unwrap();
    let kernels = ctx.unique_kernel_count();
    let handle = ctx.kernel_by_name("testmod.invert").unwrap();
    let (g, dst) = invert_graph(&ctx, &[10]);
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [245], "version 1");
    for i in 0..31 {
        install(&dir, "testmod_lineage", if i % 2 == 0 { &v2 } else { &v1 });
        // Two versions' kernels (8) exceed the limit of 8 only if replaced versions still counted.
        ctx.reload_module("testmod_lineage").unwrap();
        assert_eq!(ctx.usage(ResourceKind::Kernels).current, kernels, "reload {i}: the table's kernels");
        assert!(
            mapped_copies("testmod_lineage") <= 2,
            "reload {i}: {} copies mapped",
            mapped_copies("testmod_lineage")
        );
    }
    // The last install was v2: the graph moves from its version 1 straight to the newest, and so
    // does the handle.
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [246], "version 2 (255 - 10 + 1)");
    assert_eq!(g.reloads().unwrap(), 1, "one rebind, to the newest");
    let (g2, dst2) = (Graph::new(&ctx).unwrap(), Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap());
    let src = Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(1, 1), 0, &[10u8]).unwrap();
    g2.add_node(&handle, [&src, &dst2]).unwrap();
    g2.process().unwrap();
    assert_eq!(dst2.to_vec::<u8>().unwrap(), [246], "the old handle's node runs the newest version");
    drop(handle);
    assert_eq!(mapped_copies("testmod_lineage"), 1, "only the loaded version is left");
}

/// Entries of the temp directory that this process's module loader made (`vx-rs-modules-<pid>-…`).
fn loader_temp_entries() -> Vec<String> {
    let prefix = format!("vx-rs-modules-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Open file descriptors of this process that point at a private copy of `module`.
fn copy_fds(module: &str) -> usize {
    let needle = format!("lib{module}.");
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|t| t.to_string_lossy().contains(&needle))
        .count()
}

/// Issue 31: load → reload → unload cycles leave nothing in the temp directory, no copy mapped and
/// no descriptor open; prints what a load and a reload cost. 10,000 cycles with `VX_STRESS=full`
/// in release (`VX_STRESS=full cargo test --release -p vx-tests --test module_reload cycles --
/// --nocapture`), 300 otherwise.
#[test]
fn load_reload_unload_cycles_leave_nothing_behind() {
    let release = !cfg!(debug_assertions);
    let full = std::env::var("VX_STRESS").is_ok_and(|v| v == "full") && release;
    let cycles = if full { 10_000 } else { 300 };
    // In release the module is a release build too, as in the stress tests.
    let lib = vx_tests::testmod_profile("testmod_cycles", &[], release);
    let dir = plugin_dir("cycles", &[("testmod_cycles", &lib)]);
    let ctx = Context::new().unwrap();
    ctx.add_module_dir(&dir);
    let (mut loads, mut reloads) = (Duration::ZERO, Duration::ZERO);
    for c in 0..cycles {
        let t = Instant::now();
        ctx.load_module("testmod_cycles").unwrap();
        loads += t.elapsed();
        let t = Instant::now();
        ctx.reload_module("testmod_cycles").unwrap();
        reloads += t.elapsed();
        ctx.unload_module("testmod_cycles").unwrap();
        assert_eq!(ctx.module_state("testmod_cycles"), Some(ModuleState::Unloaded), "cycle {c}");
        if c % 50 == 0 {
            assert_eq!(loader_temp_entries(), Vec::<String>::new(), "cycle {c}: left in the temp directory");
        }
    }
    println!(
        "{cycles} load/reload/unload cycles: load {:?} each, reload {:?} each",
        loads / cycles as u32,
        reloads / cycles as u32
    );
    assert_eq!(loader_temp_entries(), Vec::<String>::new(), "left in the temp directory");
    assert_eq!(mapped_copies("testmod_cycles"), 0, "copies still mapped");
    assert_eq!(copy_fds("testmod_cycles"), 0, "descriptors of copies still open");
    let _ = std::fs::remove_dir_all(dir);
}

/// Every `tracing` warning on this thread while alive (its fields, then its message).
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Fields(String);
impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut f = Fields(String::new());
            event.record(&mut f);
            self.0.lock().unwrap().push(f.0);
        }
    }
}

impl Warnings {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// A context with module `name` (version 1) loaded from a fresh plugin directory, and a graph
/// (named `service` after its creation) whose node (renamed `inv`) inverts `[0, 100]`.
fn service(name: &str) -> (Context, std::path::PathBuf, Graph, Image) {
    let dir = plugin_dir(name, &[(name, &testmod(name, &[]))]);
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module(name).unwrap();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(2, 1), 0, &[0u8, 100]).unwrap();
    let dst = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    let node = g.add_node(&ctx.kernel_by_name("testmod.invert").unwrap(), [&src, &dst]).unwrap();
    // Renamed after the node was made: the names a reload reports are the current ones.
    g.set_name("service");
    node.set_name("inv").unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);
    (ctx, dir, g, dst)
}

#[test]
fn a_reload_that_renames_a_used_kernel_is_refused_naming_kernel_graph_and_node_and_changes_nothing() {
    let name = "testmod_rename";
    let (ctx, dir, g, dst) = service(name);
    let kernels_before = (ctx.kernel_count(), ctx.unique_kernel_count(), ctx.user_kernel_ids_in_use());
    install(&dir, name, &testmod(name, &["rename-invert", "v2"]));
    let e = ctx.reload_module(name).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ReferenceNonzero, "{e}");
    let m = e.message();
    for part in [
        "reloading module 'testmod_rename' refused: version 2.0.0 no longer publishes kernel 'testmod.invert'",
        "(it publishes 'testmod.inverted' instead: renamed?)",
        "graph 'service' node 'inv' (testmod.invert)",
        "the loaded version 1.0.0 keeps serving",
        "force the reload (ReloadOptions::force), which leaves them on the old code",
    ] {
        assert!(m.contains(part), "{part:?} missing from: {m}");
    }
    // Transactional: nothing changed.
    assert_eq!(ctx.module_state(name), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    assert_eq!(ctx.module_history(name), []);
    assert_eq!((ctx.kernel_count(), ctx.unique_kernel_count(), ctx.user_kernel_ids_in_use()), kernels_before);
    assert!(ctx.kernel_by_name("testmod.invert").is_ok());
    assert!(ctx.kernel_by_name("testmod.inverted").is_err(), "the staged kernels were discarded");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155], "still version 1");
    assert_eq!(g.reloads().unwrap(), 0);
    assert_eq!(g.stale_nodes().unwrap(), []);
    // A new node can still be made from the loaded version.
    let (g2, _) = invert_graph(&ctx, &[1]);
    g2.set_name("second");
    let e = ctx.reload_module(name).unwrap_err();
    assert!(e.message().contains("graph 'second' node 'invert#0'"), "both graphs named: {e}");
    assert!(e.message().contains("graph 'service' node 'inv'"), "{e}");

    // Without users, the same file reloads.
    drop((g, g2));
    let report = ctx.reload_module(name).unwrap();
    assert_eq!(report.from.as_deref(), Some("1.0.0"));
    assert_eq!(report.to, "2.0.0");
    assert_eq!(report.dropped, ["testmod.invert"]);
    assert_eq!(report.added, ["testmod.inverted"]);
    assert_eq!(report.replaced.len(), 3, "{report:?}");
    assert!(report.left_on_old.is_empty());
    assert!(ctx.kernel_by_name("testmod.inverted").is_ok() && ctx.kernel_by_name("testmod.invert").is_err());
    assert_eq!(ctx.module_history(name), [("1.0.0".to_string(), ModuleState::Unloaded)]);
}

#[test]
fn a_forced_reload_leaves_the_node_on_the_old_code_and_every_graph_says_so() {
    let name = "testmod_force";
    let (ctx, dir, g, dst) = service(name);
    install(&dir, name, &testmod(name, &["rename-invert", "v2"]));
    let w = Warnings::default();
    let _default = {
        use tracing_subscriber::layer::SubscriberExt;
        tracing::subscriber::set_default(tracing_subscriber::registry().with(w.clone()))
    };
    let report = ctx.reload_module_with(name, ReloadOptions::new().force(true)).unwrap();
    let left = StaleNode {
        graph: "service".into(),
        node: "inv".into(),
        kernel: "testmod.invert".into(),
        module: Some(name.into()),
        version: Some("1.0.0".into()),
    };
    assert_eq!(report.left_on_old, std::slice::from_ref(&left));
    assert_eq!(report.graphs_left_on_old(), ["service"]);
    assert_eq!(report.dropped, ["testmod.invert"]);
    let warnings = w.take();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    for part in ["graph=service", "node=inv ", "kernel=testmod.invert", "keeps running", "version 1.0.0"] {
        assert!(warnings[0].contains(part), "{part:?} missing from: {}", warnings[0]);
    }
    assert_eq!(ctx.module_state(name), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    assert_eq!(ctx.module_history(name), [("1.0.0".to_string(), ModuleState::Draining { version: "1.0.0".into() })]);
    // The graph keeps the old code and says so: in its query, and at each verification of the node.
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155], "version 1's code");
    assert_eq!(g.reloads().unwrap(), 0);
    assert_eq!(g.stale_nodes().unwrap(), [left]);
    assert_eq!(w.take(), Vec::<String>::new(), "not per frame");
    g.verify().unwrap();
    let warnings = w.take();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("graph=service") && warnings[0].contains("no longer published"), "{warnings:?}");
    // A graph not using it is not concerned.
    let other = Graph::with_name(&ctx, "other").unwrap();
    assert_eq!(other.stale_nodes().unwrap(), []);
    // Once the node goes, the old version is released.
    drop(g);
    assert_eq!(ctx.module_history(name), [("1.0.0".to_string(), ModuleState::Unloaded)]);
}

#[test]
fn a_node_on_an_older_version_counts_and_a_dropped_kernel_nobody_uses_does_not() {
    let name = "testmod_dropscale";
    let dir = plugin_dir(name, &[(name, &testmod(name, &[]))]);
    let ctx = Context::builder().threads(1).build().unwrap();
    ctx.add_module_dir(&dir);
    ctx.load_module(name).unwrap();
    let scale = |ctx: &Context| {
        let g = Graph::with_name(ctx, "scaler").unwrap();
        let src = Image::new(ctx, 4, 1, ImageFormat::U8).unwrap();
        let factor = Scalar::new(ctx, ScalarValue::Uint8(2)).unwrap();
        let out = Image::new(ctx, 4, 1, ImageFormat::U8).unwrap();
        let k = ctx.kernel_by_name("testmod.scale").unwrap();
        g.add_node(&k, [Reference::from(&src), Reference::from(&factor), Reference::from(&out)]).unwrap();
        g
    };
    let g = scale(&ctx);
    g.process().unwrap();
    // Version 2 replaces scale; the graph has not processed since, so its node still holds
    // version 1 — and would rebind to version 2, which the next reload drops.
    install(&dir, name, &testmod(name, &["v2"]));
    assert!(ctx.reload_module(name).unwrap().dropped.is_empty());
    install(&dir, name, &testmod(name, &["drop-scale"]));
    let e = ctx.reload_module(name).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ReferenceNonzero);
    assert!(e.message().contains("no longer publishes kernel 'testmod.scale'"), "{e}");
    assert!(e.message().contains("graph 'scaler' node 'scale#0' (testmod.scale)"), "{e}");
    assert!(!e.message().contains("instead"), "nothing added: {e}");
    assert_eq!(ctx.module_state(name), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
    g.process().unwrap();
    assert_eq!(g.reloads().unwrap(), 1, "rebound to version 2, which still serves");

    // Dropping a kernel no node uses is an ordinary reload.
    drop(g);
    let (g, dst) = invert_graph(&ctx, &[0, 100]);
    let report = ctx.reload_module(name).unwrap();
    assert_eq!((report.from.as_deref(), report.to.as_str()), (Some("2.0.0"), "1.0.0"));
    assert_eq!(report.dropped, ["testmod.scale"]);
    assert!(report.added.is_empty() && report.left_on_old.is_empty(), "{report:?}");
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);
    assert_eq!(g.reloads().unwrap(), 1);
    assert!(ctx.kernel_by_name("testmod.scale").is_err());
    // A reload of a module that is not loaded loads it, and says so.
    ctx.unload_module(name).unwrap();
    let report = ctx.reload_module(name).unwrap();
    assert_eq!((report.from.as_deref(), report.to.as_str()), (None, "1.0.0"));
    assert_eq!(report.added.len(), 3, "{report:?}");
}
