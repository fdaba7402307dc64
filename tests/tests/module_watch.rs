//! The plugin-directory watcher: a module rebuilt in place is picked up without a restart, a file
//! caught half-written is refused (not crashed on) and retried, and every outcome is reported. It
//! applies the context's `ModuleTrust`: no watching a directory others can write, and a file the
//! policy refuses is reported once, never loaded.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vx::*;
use vx_tests::{plugin_dir, testmod};

/// (module, was a reload, outcome) of each watcher event.
type EventLog = Arc<Mutex<Vec<(String, bool, std::result::Result<(), String>)>>>;

/// A watcher on `dir` whose every event is logged.
fn watch_logged(ctx: &Context, dir: &std::path::Path, options: WatchOptions) -> (ModuleWatcher, EventLog) {
    let events: EventLog = Arc::default();
    let log = events.clone();
    let watcher = ModuleWatcher::start(ctx, dir, options, move |e| {
        log.lock().unwrap().push((
            e.module.clone(),
            e.reload,
            e.result.as_ref().map(|_| ()).map_err(|e| e.to_string()),
        ));
    })
    .unwrap();
    (watcher, events)
}

#[test]
fn a_module_rewritten_in_place_is_reloaded_even_when_caught_half_written() {
    let (v1, v2) = (testmod("testmod_watch", &[]), testmod("testmod_watch", &["v2"]));
    let dir = plugin_dir("watch", &[("testmod_watch", &v1)]);
    let ctx = Context::builder().threads(2).build().unwrap();
    let options = WatchOptions { debounce: Duration::from_millis(150), retries: 20, load_new: false };
    let (watcher, events) = watch_logged(&ctx, &dir, options);
    ctx.load_module("testmod_watch").unwrap();
    let k = ctx.kernel_by_name("testmod.invert").unwrap();
    let g = Graph::new(&ctx).unwrap();
    let src = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    src.copy_from(Rect::full(2, 1), 0, &[0u8, 100]).unwrap();
    let dst = Image::new(&ctx, 2, 1, ImageFormat::U8).unwrap();
    g.add_node(&k, [&src, &dst]).unwrap();
    g.process().unwrap();
    assert_eq!(dst.to_vec::<u8>().unwrap(), [255, 155]);

    // Rewrite the file in place, pausing half-way for longer than the debounce interval: the
    // watcher sees a quiet, truncated file and must refuse it without harm, then take the rest.
    let bytes = std::fs::read(&v2).unwrap();
    let mut f = std::fs::File::create(dir.join("libtestmod_watch.so")).unwrap();
    f.write_all(&bytes[..bytes.len() / 2]).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    f.write_all(&bytes[bytes.len() / 2..]).unwrap();
    drop(f);

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        g.process().unwrap();
        if dst.to_vec::<u8>().unwrap() == [0, 156] {
            break;
        }
        assert!(Instant::now() < deadline, "the new version was not picked up; events: {:?}", events.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(watcher);
    let events = events.lock().unwrap();
    assert!(events.iter().all(|(m, reload, _)| m == "testmod_watch" && *reload), "{events:?}");
    let (ok, failed): (Vec<_>, Vec<_>) = events.iter().partition(|(_, _, r)| r.is_ok());
    eprintln!("watcher events: {} failed attempt(s) on the half-written file, then {} reload", failed.len(), ok.len());
    assert_eq!(ok.len(), 1, "exactly one successful reload: {events:?}");
    for (_, _, r) in &failed {
        let msg = r.as_ref().unwrap_err();
        assert!(msg.contains("truncated") || msg.contains("not a loadable library"), "{msg}");
    }
    assert_eq!(ctx.module_state("testmod_watch"), Some(ModuleState::Loaded { count: 1, version: "2.0.0".into() }));
}

fn chmod(p: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn the_watcher_refuses_a_directory_others_can_write() {
    let dir = plugin_dir("watch-ww", &[]);
    chmod(&dir, 0o777);
    let ctx = Context::new().unwrap();
    let e = ModuleWatcher::start(&ctx, &dir, WatchOptions::default(), |_| {}).err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidModule);
    let m = e.to_string();
    assert!(m.contains(&format!("ModuleWatcher: refusing {} (owner uid", dir.display())), "{m}");
    assert!(m.contains("mode 0777: writable by others") && m.contains("ModuleTrust::any()"), "{m}");
    assert!(!ctx.module_search_path().contains(&dir.canonicalize().unwrap()), "not added to the search path");
    // The development setting allows it.
    let ctx = Context::builder().module_trust(ModuleTrust::any()).build().unwrap();
    drop(ModuleWatcher::start(&ctx, &dir, WatchOptions::default(), |_| {}).unwrap());
    chmod(&dir, 0o755);
    let _ = std::fs::remove_dir_all(dir);
}

/// Wait until `events` holds `n` events (or 20 s), then a few more debounce intervals for any
/// retry; returns them.
fn settle(events: &EventLog, n: usize, debounce: Duration) -> Vec<(String, bool, std::result::Result<(), String>)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while events.lock().unwrap().len() < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(debounce * 6);
    events.lock().unwrap().clone()
}

#[test]
fn the_watcher_reports_refused_files_once_and_never_loads_them() {
    let (v1, v2) = (testmod("testmod_watchtrust", &[]), testmod("testmod_watchtrust", &["v2"]));
    let dir = plugin_dir("watch-trust", &[]);
    let d1 = module_digest(&v1).unwrap();
    let trust = ModuleTrust::owner().pin("testmod_watchtrust", &d1).unwrap();
    let ctx = Context::builder().module_trust(trust).build().unwrap();
    let debounce = Duration::from_millis(100);
    let options = WatchOptions { debounce, retries: 5, load_new: true };
    let (_watcher, events) = watch_logged(&ctx, &dir, options);
    let file = dir.join("libtestmod_watchtrust.so");
    // A group-writable module file appears: refused once (not retried), not loaded.
    let tmp = dir.join(".tmp");
    std::fs::copy(&v1, &tmp).unwrap();
    chmod(&tmp, 0o664);
    // A group others are in (nogroup: nobody's primary group); the owner's own group could write.
    std::os::unix::fs::lchown(&tmp, None, Some(65534)).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let seen = settle(&events, 1, debounce);
    assert_eq!(seen.len(), 1, "one report, no retries: {seen:?}");
    let msg = seen[0].2.as_ref().unwrap_err();
    assert!(
        msg.contains(&format!("refusing {} (owner uid 0, group 65534, mode 0664: writable by group)", file.display())),
        "{msg}"
    );
    assert_eq!(ctx.module_state("testmod_watchtrust"), None, "never loaded");
    // Fixed by its owner: loaded.
    chmod(&file, 0o644);
    let seen = settle(&events, 2, debounce);
    assert!(seen.len() == 2 && seen[1].2.is_ok(), "{seen:?}");
    assert_eq!(ctx.module_state("testmod_watchtrust"), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    // A build whose digest is not pinned: refused once, version 1 keeps serving.
    let tmp = dir.join(".tmp");
    std::fs::copy(&v2, &tmp).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let seen = settle(&events, 3, debounce);
    assert_eq!(seen.len(), 3, "{seen:?}");
    let msg = seen[2].2.as_ref().unwrap_err();
    assert!(seen[2].1 && msg.contains("which is not pinned for it"), "{msg}");
    assert_eq!(ctx.module_state("testmod_watchtrust"), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_reload_that_would_strand_a_live_node_is_reported_once_and_the_old_version_keeps_serving() {
    let name = "testmod_watch_refused";
    let v1 = testmod(name, &[]);
    let renamed = testmod(name, &["rename-invert", "v2"]);
    let dir = plugin_dir("watch-refused", &[(name, &v1)]);
    let ctx = Context::builder().threads(1).build().unwrap();
    let options = WatchOptions { debounce: Duration::from_millis(100), retries: 5, load_new: false };
    let (watcher, events) = watch_logged(&ctx, &dir, options);
    ctx.load_module(name).unwrap();
    let g = Graph::with_name(&ctx, "live").unwrap();
    let src = Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap();
    let dst = Image::new(&ctx, 1, 1, ImageFormat::U8).unwrap();
    g.add_node(&ctx.kernel_by_name("testmod.invert").unwrap(), [&src, &dst]).unwrap();
    g.process().unwrap();

    let tmp = dir.join(".tmp");
    std::fs::copy(&renamed, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join(format!("lib{name}.so"))).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while events.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no event");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Retries would come every debounce interval: ten intervals bring none.
    std::thread::sleep(Duration::from_millis(1000));
    drop(watcher);
    let events = events.lock().unwrap();
    assert_eq!(events.len(), 1, "reported once, not retried: {events:?}");
    let (module, reload, result) = &events[0];
    assert_eq!((module.as_str(), *reload), (name, true));
    let msg = result.as_ref().unwrap_err();
    assert!(msg.contains("refused") && msg.contains("graph 'live' node 'invert#0'"), "{msg}");
    assert!(msg.contains("VX_ERROR_REFERENCE_NONZERO"), "{msg}");
    assert_eq!(ctx.module_state(name), Some(ModuleState::Loaded { count: 1, version: "1.0.0".into() }));
    g.process().unwrap();
    assert_eq!(g.stale_nodes().unwrap(), []);
}
